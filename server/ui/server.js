// Talking to `hark serve` from the page: the API key (kept in sessionStorage, so for this tab
// only), JSON requests, the upload of a file with its progress and the server-sent events of its
// transcription, and the server's errors as sentences a person reads.

const KEY_ITEM = 'hark.apiKey';

export const apiKey = {
  get: () => sessionStorage.getItem(KEY_ITEM) || '',
  set: (k) => sessionStorage.setItem(KEY_ITEM, k),
  clear: () => sessionStorage.removeItem(KEY_ITEM),
};

// An error the page shows: `sentence` for people; `status` the HTTP status (0: no answer).
export class ServerError extends Error {
  constructor(sentence, status = 0, code = '') {
    super(sentence);
    this.status = status;
    this.code = code;
  }
}

function serverMessage(body) {
  try {
    const j = JSON.parse(body);
    const e = j && j.error;
    if (typeof e === 'string') return { message: e, code: j.code || '' };
    if (e && typeof e.message === 'string') return { message: e.message, code: e.code || '' };
  } catch {
    // not JSON: a proxy's page, say
  }
  return { message: '', code: '' };
}

const sentenceEnd = (s) => (/[.!?]$/.test(s) ? s : `${s}.`);

// The sentence for a failed answer: what happened in plain words, then the server's own message.
export function errorFor(status, body, retryAfter) {
  const { message, code } = serverMessage(body);
  const detail = message ? ` The server said: ${sentenceEnd(message)}` : '';
  let s;
  switch (status) {
    case 401: s = 'The server did not accept the API key.'; break;
    case 403: s = 'The server does not let this page do that.'; break;
    case 408: s = 'The upload was too slow, and the server stopped waiting for it.'; break;
    case 413: s = 'The file is too large (or too long) for this server.'; break;
    case 415: s = 'The server could not read this file as audio.'; break;
    case 503: {
      const secs = Number(retryAfter);
      s = code === 'shutting_down'
        ? 'The server is shutting down.'
        : `The server is busy with other work.${secs > 0 ? ` Try again in ${secs} second${secs === 1 ? '' : 's'}.` : ' Try again shortly.'}`;
      break;
    }
    case 504: s = 'The transcription took longer than the server allows.'; break;
    default:
      s = status >= 500 ? `The server failed (${status}).` : `The server refused the request (${status}).`;
  }
  return new ServerError(s + detail, status, code);
}

function authHeaders() {
  const k = apiKey.get();
  return k ? { Authorization: `Bearer ${k}` } : {};
}

export async function getJson(path) {
  let res;
  try {
    res = await fetch(path, { headers: authHeaders(), cache: 'no-store' });
  } catch {
    throw new ServerError('The server cannot be reached. Is `hark serve` still running?');
  }
  const body = await res.text();
  if (!res.ok) throw errorFor(res.status, body, res.headers.get('Retry-After'));
  return JSON.parse(body);
}

// Uploads `file` to /v1/audio/transcriptions (or translations) with the form `fields` and
// stream=true, response_format=verbose_json. Calls onUpload(fraction) as the bytes go,
// onSegment(segment) for each segment as it is decoded; resolves with the final verbose_json.
// XMLHttpRequest, not fetch: only it reports upload progress. Returns { done, abort }.
export function transcribeFile(file, fields, translate, { onUpload, onUploaded, onSegment }) {
  const xhr = new XMLHttpRequest();
  const done = new Promise((resolve, reject) => {
    xhr.open('POST', translate ? '/v1/audio/translations' : '/v1/audio/transcriptions');
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    let seen = 0;
    let final = null;
    let streamError = null;
    // The events so far: each is "event: T\ndata: JSON\n\n"; a partial one waits for the rest.
    const readEvents = () => {
      if (xhr.status !== 200) return;
      const text = xhr.responseText;
      let end;
      while ((end = text.indexOf('\n\n', seen)) >= 0) {
        const frame = text.slice(seen, end);
        seen = end + 2;
        const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('\n');
        if (!data) continue;
        let ev;
        try {
          ev = JSON.parse(data);
        } catch {
          continue;
        }
        if (ev.type === 'transcript.text.delta' && ev.segment) onSegment(ev.segment);
        else if (ev.type === 'transcript.text.done') final = ev;
        else if (ev.error) {
          const said = typeof ev.error.message === 'string' ? ` The server said: ${sentenceEnd(ev.error.message)}` : '';
          streamError = new ServerError(`The transcription failed.${said}`, 500, ev.error.code || '');
        }
      }
    };
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onUpload(e.loaded / e.total); };
    xhr.upload.onload = () => onUploaded();
    xhr.onprogress = readEvents;
    xhr.onload = () => {
      if (xhr.status !== 200) {
        reject(errorFor(xhr.status, xhr.responseText, xhr.getResponseHeader('Retry-After')));
        return;
      }
      readEvents();
      if (final) resolve(final);
      else reject(streamError || new ServerError('The transcription stopped before it was finished.'));
    };
    xhr.onerror = () => reject(new ServerError('The connection to the server was lost.'));
    xhr.onabort = () => reject(new ServerError('Cancelled.', 0, 'cancelled'));
    const form = new FormData();
    form.append('file', file, file.name || 'audio');
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('response_format', 'verbose_json');
    form.append('stream', 'true');
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}
