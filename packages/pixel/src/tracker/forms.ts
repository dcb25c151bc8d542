// Opt-in form capture (only when the pixel config enables it): on submit, the first email-like
// field of the form identifies the visitor. Nothing else of the form is read.
import { guard } from './guard.js'

/** Listens for form submissions and hands a captured email to `identify`. */
export function captureForms(identify: (email: string) => void): void {
  document.addEventListener(
    'submit',
    guard((event: Event) => {
      for (const field of (event.target as HTMLFormElement).elements as unknown as HTMLInputElement[]) {
        // type="email", or a name such as "email" / "e-mail" / "work_mail".
        if (/mail/i.test(field.type + field.name) && /^\S+@\S+\.\S+$/.test(field.value)) {
          return identify(field.value)
        }
      }
    }),
    true,
  )
}
