// The microphone to `hark serve`'s realtime WebSocket: getUserMedia, the AudioWorklet that makes
// 16 kHz 16-bit PCM of it (pcm-worklet.js), the session's events back, and the recording kept so
// it can be saved as a WAV file.

import { ServerError, apiKey } from './server.js';

const RATE = 16000;

function micError(e) {
  switch (e && e.name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return new ServerError('The browser did not allow the microphone. Allow it for this page and press Record again.');
    case 'NotFoundError':
      return new ServerError('No microphone was found.');
    case 'NotReadableError':
      return new ServerError('The microphone is in use by another program, or it failed.');
    default:
      return new ServerError(`The microphone could not be started (${(e && e.message) || e}).`);
  }
}

export function wavBlob(pieces, rate = RATE) {
  const n = pieces.reduce((a, p) => a + p.length, 0);
  const head = new DataView(new ArrayBuffer(44));
  const text = (at, s) => { for (let i = 0; i < s.length; ++i) head.setUint8(at + i, s.charCodeAt(i)); };
  text(0, 'RIFF'); head.setUint32(4, 36 + 2 * n, true); text(8, 'WAVE');
  text(12, 'fmt '); head.setUint32(16, 16, true); head.setUint16(20, 1, true); head.setUint16(22, 1, true);
  head.setUint32(24, rate, true); head.setUint32(28, 2 * rate, true); head.setUint16(32, 2, true);
  head.setUint16(34, 16, true);
  text(36, 'data'); head.setUint32(40, 2 * n, true);
  return new Blob([head, ...pieces], { type: 'audio/wav' });
}

// One recording. start() opens the session and the microphone; stop() sends what is left, asks the
// server to finish, and resolves once it said session.done. onEvent gets every server event;
// onLost(error) is called when the session ends any other way.
export class LiveSession {
  constructor(options, { onEvent, onLost }) {
    this.options = options;
    this.onEvent = onEvent;
    this.onLost = onLost;
    this.pieces = [];
    this.done = false;
    this.stopping = false;
  }

  url() {
    const q = new URLSearchParams({ sample_rate: String(RATE), format: 's16le' });
    const o = this.options;
    if (o.model) q.set('model', o.model);
    if (o.language) q.set('language', o.language);
    if (o.translate) q.set('translate', 'true');
    if (o.vad) q.set('silero_vad', 'true');
    const key = apiKey.get();
    if (key) q.set('api_key', key);  // a browser's WebSocket cannot send an Authorization header
    return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/v1/realtime?${q}`;
  }

  async start() {
    // The context is made now, in the click's turn: one made after an await may start suspended
    // (the browsers' autoplay rules; Firefox's does), and then no audio would flow.
    this.ctx = new AudioContext();
    this.ctx.resume().catch(() => {});
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true },
      });
    } catch (e) {
      this.release();
      throw micError(e);
    }
    try {
      await this.open();
      await this.ctx.audioWorklet.addModule('/ui/pcm-worklet.js');
      const source = this.ctx.createMediaStreamSource(this.stream);
      this.node = new AudioWorkletNode(this.ctx, 'pcm16k', { numberOfInputs: 1, numberOfOutputs: 1 });
      this.flushed = new Promise((resolve) => {
        this.node.port.onmessage = (e) => {
          if (e.data === 'flushed') { resolve(); return; }
          const piece = new Int16Array(e.data);
          this.pieces.push(piece);
          if (this.ws.readyState === WebSocket.OPEN && !this.stopSent) this.ws.send(piece.buffer);
        };
      });
      // The node's output is silence; a muted path to the speakers keeps the graph pulling it.
      const mute = this.ctx.createGain();
      mute.gain.value = 0;
      source.connect(this.node).connect(mute).connect(this.ctx.destination);
      this.started = performance.now();
    } catch (e) {
      this.release();
      if (this.ws) this.ws.close();
      throw e instanceof ServerError ? e : new ServerError(`Recording could not start (${e.message || e}).`);
    }
  }

  // The WebSocket, open and its session.started received.
  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url());
      ws.binaryType = 'arraybuffer';
      this.ws = ws;
      let opened = false;
      ws.onmessage = (m) => {
        let ev;
        try {
          ev = JSON.parse(m.data);
        } catch {
          return;
        }
        if (ev.type === 'session.started') {
          opened = true;
          resolve();
        }
        if (ev.type === 'session.done') this.done = true;
        this.onEvent(ev);
      };
      ws.onclose = (e) => {
        this.ended = this.ended || performance.now();
        this.release();
        if (!opened) {
          // A refused upgrade shows the browser no status: the page asks the server why.
          reject(new ServerError('', 0, 'upgrade_refused'));
        } else if (!this.done) {
          this.onLost(new ServerError(
            e.code === 1001 ? 'The server is shutting down; the live session ended.'
                            : `The connection to the server was lost (code ${e.code}). What was said until then is kept.`));
        }
        if (this.onClosed) this.onClosed();
      };
    });
  }

  seconds() { return this.started ? ((this.ended || performance.now()) - this.started) / 1000 : 0; }

  async stop() {
    if (this.stopping) return;
    this.stopping = true;
    this.ended = performance.now();
    if (this.stream) for (const t of this.stream.getTracks()) t.stop();
    if (this.node) {
      this.node.port.postMessage('flush');
      await Promise.race([this.flushed, new Promise((r) => setTimeout(r, 1000))]);
      this.node.port.postMessage('stop');
    }
    const closed = new Promise((resolve) => { this.onClosed = resolve; });
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ type: 'stop' }));
      this.stopSent = true;
      await closed;
    }
    this.release();
  }

  release() {
    if (this.stream) for (const t of this.stream.getTracks()) t.stop();
    // Once: a second close() while the first is under way throws (Firefox).
    if (this.ctx && !this.ctxClosing) {
      this.ctxClosing = true;
      this.ctx.close().catch(() => {});
    }
  }

  recording() { return wavBlob(this.pieces); }
}
