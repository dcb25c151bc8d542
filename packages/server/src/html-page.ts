/** A small page of this server (unsubscribe, billing): the title is plain text, the body HTML. */
export const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${title}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto">` +
  `<h1>${title}</h1>${body}</body></html>`
