// On the audio thread: the microphone at the context's rate (44.1 or 48 kHz, usually) to 16 kHz
// 16-bit mono PCM, what the realtime WebSocket takes. A windowed-sinc low-pass at 8 kHz comes
// with the resampling, so the voice's upper harmonics do not fold back into the band Whisper
// hears. The samples go to the page in 100 ms pieces (transferred ArrayBuffers). The page's
// "flush" message sends what is left (stop finishes the last slice), then "flushed".

const OUT_RATE = 16000;
const PIECE = 1600;      // 100 ms at 16 kHz
const ZEROS = 8;         // the kernel's zero crossings on each side of its centre
const PHASES = 256;      // fractional positions the kernel is tabulated at

class Pcm16k extends AudioWorkletProcessor {
  constructor() {
    super();
    // sampleRate: the context's rate, a global of the worklet scope.
    this.step = sampleRate / OUT_RATE;             // input samples per output sample
    const cut = Math.min(1, 1 / this.step);        // the cutoff, as a fraction of the input's Nyquist
    this.reach = Math.ceil(ZEROS / cut);           // input samples on each side of an output
    const taps = 2 * this.reach;
    // table[p * taps + k]: the weight of input floor(t) - reach + 1 + k for t's fraction p / PHASES,
    // normalised so each phase sums to 1 (no change of level).
    this.table = new Float32Array(PHASES * taps);
    for (let p = 0; p < PHASES; ++p) {
      let sum = 0;
      for (let k = 0; k < taps; ++k) {
        const u = k - this.reach + 1 - p / PHASES;  // distance from the output, input samples
        const x = cut * u;
        const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
        const w = 0.5 + 0.5 * Math.cos((Math.PI * u) / (this.reach + 1));  // Hann
        this.table[p * taps + k] = sinc * w;
        sum += sinc * w;
      }
      for (let k = 0; k < taps; ++k) this.table[p * taps + k] /= sum;
    }
    this.buf = new Float32Array(4096);
    this.len = this.reach;  // starts with `reach` zeros: the first output needs samples before it
    this.t = this.reach;    // buffer position of the next output sample
    this.out = new Int16Array(PIECE);
    this.n = 0;
    this.stopped = false;
    this.port.onmessage = (e) => {
      if (e.data === 'flush') {
        this.push(new Float32Array(this.reach + 1));  // silence to reach the last real sample
        this.post();
        this.port.postMessage('flushed');
      } else if (e.data === 'stop') {
        this.stopped = true;
      }
    };
  }

  push(samples) {
    if (this.len + samples.length > this.buf.length) {
      const bigger = new Float32Array(Math.max(2 * this.buf.length, this.len + samples.length));
      bigger.set(this.buf.subarray(0, this.len));
      this.buf = bigger;
    }
    this.buf.set(samples, this.len);
    this.len += samples.length;
    const taps = 2 * this.reach;
    while (Math.floor(this.t) + this.reach < this.len) {
      const i = Math.floor(this.t);
      const p = Math.min(PHASES - 1, Math.round((this.t - i) * PHASES));
      const w = this.table.subarray(p * taps, p * taps + taps);
      const x0 = i - this.reach + 1;
      let y = 0;
      for (let k = 0; k < taps; ++k) y += w[k] * this.buf[x0 + k];
      const c = Math.max(-1, Math.min(1, y));
      this.out[this.n++] = Math.round(c * 32767);
      if (this.n === PIECE) this.post();
      this.t += this.step;
    }
    // Keep only what the next outputs still reach back to.
    const drop = Math.floor(this.t) - this.reach + 1;
    if (drop > 0) {
      this.buf.copyWithin(0, drop, this.len);
      this.len -= drop;
      this.t -= drop;
    }
  }

  post() {
    if (this.n === 0) return;
    const piece = this.out.slice(0, this.n);
    this.port.postMessage(piece.buffer, [piece.buffer]);
    this.n = 0;
  }

  process(inputs) {
    const channels = inputs[0];
    if (channels && channels.length > 0) {
      const frames = channels[0].length;
      const mono = new Float32Array(frames);
      for (const ch of channels) for (let j = 0; j < frames; ++j) mono[j] += ch[j] / channels.length;
      this.push(mono);
    }
    return !this.stopped;
  }
}

registerProcessor('pcm16k', Pcm16k);
