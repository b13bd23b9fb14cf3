// The page of `hark serve`: the options the server offers, a file transcribed with its segments
// arriving as they are decoded, the microphone transcribed live, and the results to play back
// and download. Every failure is a sentence in #notice, and the page stays usable after it.

import { shortTime, toSrt, toTxt, toVtt } from './formats.js';
import { LiveSession } from './live.js';
import { ServerError, apiKey, getJson, transcribeFile } from './server.js';

const $ = (id) => document.getElementById(id);
const ui = {
  serverLine: $('server-line'), notice: $('notice'), keyPanel: $('key-panel'), keyForm: $('key-form'),
  keyInput: $('key-input'), app: $('app'), model: $('model'), language: $('language'),
  taskField: $('task-field'), words: $('words'), vad: $('vad'), vadLabel: $('vad-label'), drop: $('drop'),
  fileInput: $('file-input'), fileProgress: $('file-progress'), progressLabel: $('progress-label'),
  progressBar: $('progress-bar'), cancel: $('cancel'), record: $('record'), recTime: $('rec-time'),
  recDownload: $('rec-download'), status: $('status'), player: $('player'), segments: $('segments'),
  partial: $('partial'), downloads: $('downloads'),
};

let models = [];
let busy = null;         // the running upload ({ abort }) or live session
let segments = [];       // the result on show: { start, end, text }
let result = null;       // what the json download holds
const urls = new Map();  // object URLs by element, revoked when replaced

function setUrl(el, attr, blob) {
  if (urls.has(el)) URL.revokeObjectURL(urls.get(el));
  const u = URL.createObjectURL(blob);
  urls.set(el, u);
  el[attr] = u;
}

function showNotice(text) {
  ui.notice.textContent = text;
  ui.notice.hidden = false;
}
function clearNotice() {
  ui.notice.hidden = true;
  ui.notice.textContent = '';
}

function selectedModel() { return models.find((m) => m.id === ui.model.value) || models[0]; }

function optionsNow() {
  const task = ui.taskField.querySelector('input[name="task"]:checked');
  const m = selectedModel();
  return {
    model: m ? m.id : '',
    language: ui.language.value,
    translate: task && task.value === 'translate' && !ui.taskField.disabled,
    words: ui.words.checked,
    vad: ui.vad.checked && !ui.vad.disabled,
  };
}

// The language list, translation and VAD as the chosen model and the server allow.
function modelChanged() {
  const m = selectedModel();
  if (!m) return;
  const keep = ui.language.value;
  ui.language.replaceChildren();
  const langs = Array.isArray(m.languages) ? m.languages : [];
  if (m.multilingual !== false) ui.language.append(new Option('Detect it', 'auto'));
  for (const l of langs) ui.language.append(new Option(l.name ? l.name[0].toUpperCase() + l.name.slice(1) : l.code, l.code));
  ui.language.value = [...ui.language.options].some((o) => o.value === keep) ? keep : ui.language.options[0]?.value;
  ui.taskField.disabled = m.multilingual === false;
  if (ui.taskField.disabled) ui.taskField.querySelector('input[value="transcribe"]').checked = true;
  ui.vad.disabled = !m.vad;
  ui.vadLabel.title = m.vad ? '' : 'This server has no VAD model (hark serve --vad-model)';
}

async function loadModels() {
  try {
    const list = await getJson('/v1/models');
    models = Array.isArray(list.data) ? list.data : [];
  } catch (e) {
    if (e.status === 401) {
      askForKey(apiKey.get() ? 'The server did not accept this API key. Check it and enter it again.' : '');
      return false;
    }
    showNotice(e.message);
    return false;
  }
  ui.model.replaceChildren(...models.map((m) => new Option(m.id, m.id)));
  modelChanged();
  ui.keyPanel.hidden = true;
  ui.app.hidden = false;
  return true;
}

function askForKey(why) {
  apiKey.clear();
  ui.app.hidden = true;
  ui.keyPanel.hidden = false;
  if (why) showNotice(why);
  ui.keyInput.focus();
}

async function start() {
  try {
    const h = await getJson('/health');
    ui.serverLine.textContent = `Server ready: ${h.models.length === 1 ? 'model' : 'models'} ${h.models.join(', ')}.`;
  } catch (e) {
    ui.serverLine.textContent = '';
    showNotice(e.message);
  }
  await loadModels();
}

// ---- results --------------------------------------------------------------------------------

function clearResult(statusText) {
  segments = [];
  result = null;
  ui.segments.replaceChildren();
  ui.partial.textContent = '';
  ui.downloads.hidden = true;
  ui.status.textContent = statusText;
}

function addSegment(s) {
  segments.push({ start: s.start, end: s.end, text: s.text });
  const li = document.createElement('li');
  const b = document.createElement('button');
  b.type = 'button';
  const time = document.createElement('time');
  time.textContent = `${shortTime(s.start)}–${shortTime(s.end)}`;
  const text = document.createElement('span');
  text.className = 'text';
  text.textContent = s.text.trim();
  b.append(time, text);
  b.setAttribute('aria-label', `${text.textContent} (from ${shortTime(s.start)}; play from here)`);
  b.addEventListener('click', () => {
    if (ui.player.hidden) return;
    ui.player.currentTime = s.start;
    ui.player.play().catch(() => {});
  });
  li.append(b);
  ui.segments.append(li);
}

function offerDownloads() {
  setUrl($('dl-txt'), 'href', new Blob([toTxt(segments)], { type: 'text/plain' }));
  setUrl($('dl-srt'), 'href', new Blob([toSrt(segments)], { type: 'application/x-subrip' }));
  setUrl($('dl-vtt'), 'href', new Blob([toVtt(segments)], { type: 'text/vtt' }));
  setUrl($('dl-json'), 'href', new Blob([JSON.stringify(result, null, 2)], { type: 'application/json' }));
  ui.downloads.hidden = segments.length === 0;
}

function failed(e) {
  if (e instanceof ServerError && e.status === 401) {
    askForKey('The server did not accept the API key. Enter it again.');
  } else if (!(e instanceof ServerError && e.code === 'cancelled')) {
    showNotice(e.message);
  }
}

// ---- a file ---------------------------------------------------------------------------------

function setProgress(label, fraction) {
  ui.progressLabel.textContent = label;
  if (fraction === null) ui.progressBar.removeAttribute('value');
  else ui.progressBar.value = Math.round(100 * Math.min(1, fraction));
}

function transcribe(file) {
  if (busy) return;
  clearNotice();
  clearResult(`Uploading ${file.name}…`);
  setUrl(ui.player, 'src', file);
  ui.player.hidden = false;
  ui.fileProgress.hidden = false;
  ui.record.disabled = true;
  setProgress('Uploading', 0);
  const o = optionsNow();
  const fields = { model: o.model, language: o.language };
  if (o.words) {
    fields['timestamp_granularities[]'] = 'word';
  }
  if (o.vad) fields.vad = 'true';
  const t0 = performance.now();
  const duration = () => (Number.isFinite(ui.player.duration) ? ui.player.duration : 0);
  const job = transcribeFile(file, fields, o.translate, {
    onUpload: (f) => setProgress('Uploading', f),
    onUploaded: () => {
      setProgress('Transcribing', duration() ? 0 : null);
      ui.status.textContent = `Transcribing ${file.name}…`;
    },
    onSegment: (s) => {
      addSegment(s);
      if (duration()) setProgress('Transcribing', s.end / duration());
    },
  });
  busy = job;
  ui.cancel.focus();
  job.done.then((final) => {
    result = { ...final };
    delete result.type;
    // The final list is the whole truth (the streamed ones are the same segments).
    if (Array.isArray(final.segments) && final.segments.length !== segments.length) {
      clearResult('');
      for (const s of final.segments) addSegment(s);
    }
    offerDownloads();
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    const lang = final.language ? `, language ${final.language}` : '';
    ui.status.textContent = segments.length
      ? `Done: ${segments.length} segment${segments.length === 1 ? '' : 's'} from ${Number(final.duration || 0).toFixed(1)} s of audio${lang}, in ${secs} s.`
      : 'Done: no speech was found.';
  }, (e) => {
    failed(e);
    ui.status.textContent = segments.length ? 'Stopped; the segments so far are shown.' : 'Nothing transcribed.';
  }).finally(() => {
    busy = null;
    ui.fileProgress.hidden = true;
    ui.record.disabled = false;
    ui.fileInput.value = '';
  });
}

ui.fileInput.addEventListener('change', () => {
  if (ui.fileInput.files.length) transcribe(ui.fileInput.files[0]);
});
ui.cancel.addEventListener('click', () => { if (busy && busy.abort) busy.abort(); });
for (const type of ['dragenter', 'dragover']) {
  ui.drop.addEventListener(type, (e) => {
    e.preventDefault();
    ui.drop.classList.add('over');
  });
}
ui.drop.addEventListener('dragleave', () => ui.drop.classList.remove('over'));
ui.drop.addEventListener('drop', (e) => {
  e.preventDefault();
  ui.drop.classList.remove('over');
  const f = e.dataTransfer && e.dataTransfer.files[0];
  if (f) transcribe(f);
});

// ---- the microphone -------------------------------------------------------------------------

let timer = 0;

function onLiveEvent(ev) {
  if (ev.type === 'transcript.partial') {
    ui.partial.textContent = ev.data && ev.data.result ? ev.data.result.trim() : '';
  } else if (ev.type === 'transcript.final') {
    ui.partial.textContent = '';
    for (const s of (ev.data && ev.data.segments) || []) {
      if (!s.text || !s.text.trim()) continue;
      addSegment({ start: s.t0 / 100, end: s.t1 / 100, text: s.text });
    }
  } else if (ev.type === 'error' && ev.error) {
    showNotice(`The server reported a problem with the live audio: ${ev.error.message}`);
  }
}

// Why a session could not open: a refused upgrade shows the page no status, so ask the server.
async function whyRefused() {
  try {
    await getJson('/v1/models');
    const h = await getJson('/health');
    if (!h.ready) return new ServerError('The server is shutting down.');
    return new ServerError('The server is busy with other work (every model state is in use). Try again shortly.');
  } catch (e) {
    return e;
  }
}

async function startRecording() {
  clearNotice();
  clearResult('Starting the microphone…');
  ui.player.hidden = true;
  ui.recDownload.hidden = true;
  ui.record.disabled = true;
  const session = new LiveSession(optionsNow(), {
    onEvent: onLiveEvent,
    onLost: (e) => { showNotice(e.message); finishRecording(session); },
  });
  try {
    await session.start();
  } catch (e) {
    ui.record.disabled = false;
    ui.status.textContent = 'Not recording.';
    failed(e.code === 'upgrade_refused' ? await whyRefused() : e);
    return;
  }
  busy = session;
  result = null;
  ui.record.disabled = false;
  ui.record.textContent = 'Stop';
  ui.record.classList.add('recording');
  ui.record.setAttribute('aria-pressed', 'true');
  ui.status.textContent = 'Recording: speak now.';
  timer = setInterval(() => { ui.recTime.textContent = shortTime(session.seconds()).replace(/\.\d+$/, ''); }, 250);
  for (const el of [ui.fileInput, ui.model, ui.language]) el.disabled = true;
}

async function finishRecording(session) {
  if (session.finishing) return;
  session.finishing = true;
  clearInterval(timer);
  ui.record.disabled = true;
  ui.record.textContent = 'Finishing…';
  ui.status.textContent = 'Finishing the last words…';
  await session.stop();
  busy = null;
  ui.partial.textContent = '';
  ui.record.disabled = false;
  ui.record.textContent = 'Record';
  ui.record.classList.remove('recording');
  ui.record.setAttribute('aria-pressed', 'false');
  for (const el of [ui.fileInput, ui.model, ui.language]) el.disabled = false;
  if (session.pieces.length) {
    const wav = session.recording();
    setUrl(ui.recDownload, 'href', wav);
    ui.recDownload.hidden = false;
    setUrl(ui.player, 'src', wav);
    ui.player.hidden = false;
  }
  result = { text: segments.map((s) => s.text).join('').trim(), segments };
  offerDownloads();
  ui.status.textContent = `Recording finished: ${session.seconds().toFixed(1)} s, ${segments.length} segment${segments.length === 1 ? '' : 's'}.`;
}

ui.record.addEventListener('click', () => {
  if (busy instanceof LiveSession) finishRecording(busy);
  else if (!busy) startRecording();
});

// ---- the key --------------------------------------------------------------------------------

ui.keyForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const k = ui.keyInput.value.trim();
  if (!k) return;
  clearNotice();
  apiKey.set(k);
  ui.keyInput.value = '';
  if (await loadModels()) clearNotice();
});
ui.model.addEventListener('change', modelChanged);

start();
