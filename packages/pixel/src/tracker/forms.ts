// Opt-in form capture (only when the pixel config enables it): on submit, the first email-like
// field of the form identifies the visitor. Nothing else of the form is read.
import { doc, guard } from './guard.js'

/** Listens for form submissions and hands a captured email to `identify`. */
export function captureForms(identify: (email: string) => void): void {
  doc.addEventListener(
    'submit',
    guard((event: Event) => {
      for (const field of (event.target as HTMLFormElement).elements as unknown as HTMLInputElement[]) {
        // type="email", or a name such as "email" / "e-mail" / "work_mail", with a value that looks
        // like an address (the same cheap check as identify's; ingest validates it).
        if (/mail/i.test(field.type + field.name) && /.@./.test(field.value)) {
          return identify(field.value)
        }
      }
    }),
    true,
  )
}
