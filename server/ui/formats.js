// The downloads of a transcript, made in the page from the segments the server streamed (times in
// seconds, 10 ms steps): the same bytes as the server's own txt, srt and vtt (the browser test
// compares the srt with /v1/audio/transcriptions'), so a result needs no second transcription.

const SPACE = /^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g;
const trim = (s) => s.replace(SPACE, '');

// A cue's text: a blank line would end the cue, so runs of line breaks (and the spaces around
// them) become one.
const cueText = (s) => s.replace(/[ \t\f\v]*[\r\n][ \t\n\r\f\v]*/g, '\n');

function stamp(seconds, comma) {
  const ms = Math.max(0, Math.round(seconds * 100)) * 10;
  const pad = (n, w) => String(n).padStart(w, '0');
  const h = Math.floor(ms / 3600000), m = Math.floor(ms / 60000) % 60, s = Math.floor(ms / 1000) % 60;
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${comma ? ',' : '.'}${pad(ms % 1000, 3)}`;
}

// "1:02.50": a time on the page.
export function shortTime(seconds) {
  const t = Math.max(0, seconds);
  const m = Math.floor(t / 60);
  return `${m}:${(t - 60 * m).toFixed(2).padStart(5, '0')}`;
}

export function toTxt(segments) {
  return segments.map((s) => trim(s.text)).filter((t) => t).map((t) => `${t}\n`).join('');
}

export function toSrt(segments) {
  let out = '';
  let n = 0;
  for (const s of segments) {
    const text = cueText(trim(s.text));
    if (!text) continue;
    out += `${++n}\n${stamp(s.start, true)} --> ${stamp(s.end, true)}\n${text}\n\n`;
  }
  return out;
}

export function toVtt(segments) {
  const escape = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  let out = 'WEBVTT\n\n';
  for (const s of segments) {
    const text = escape(cueText(trim(s.text)));
    if (!text) continue;
    out += `${stamp(s.start, false)} --> ${stamp(s.end, false)}\n${text}\n\n`;
  }
  return out;
}
