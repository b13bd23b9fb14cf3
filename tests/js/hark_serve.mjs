// What the JavaScript tests of `hark serve` share (the openai SDK test, the page's browser test):
// a WAV of gliding tones, a seeded micro model, and the server started on a free loopback port.
import { spawn, execFileSync } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

// `seconds` of gliding tones with pauses, 16 kHz mono 16-bit WAV.
export function tonesWav(seconds = 4) {
  const rate = 16000, n = seconds * rate;
  const buf = Buffer.alloc(44 + 2 * n);
  buf.write('RIFF', 0); buf.writeUInt32LE(36 + 2 * n, 4); buf.write('WAVE', 8);
  buf.write('fmt ', 12); buf.writeUInt32LE(16, 16); buf.writeUInt16LE(1, 20); buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(rate, 24); buf.writeUInt32LE(2 * rate, 28); buf.writeUInt16LE(2, 32); buf.writeUInt16LE(16, 34);
  buf.write('data', 36); buf.writeUInt32LE(2 * n, 40);
  for (let i = 0; i < n; i++) {
    const t = i / rate;
    const a = (t % 2 < 1.5 ? 0.3 : 0) * Math.sin(2 * Math.PI * (200 + 30 * t) * t);
    buf.writeInt16LE(Math.round(a * 32767), 44 + 2 * i);
  }
  return buf;
}

// A seeded micro model (f16) in `dir`, made by make-test-model; its path.
export function microModel(makeModel, dir) {
  const model = path.join(dir, 'micro.bin');
  execFileSync(makeModel, ['-o', model, '--preset', 'micro', '--type', 'f16'], { stdio: 'ignore' });
  return model;
}

// `hark serve ARGS --port 0`, once it listens: { server (the child process), port }.
export async function startServe(hark, args) {
  const server = spawn(hark, ['serve', ...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: server.stdout });
  const port = await new Promise((resolve, reject) => {
    lines.once('line', (l) => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(l);
      m ? resolve(Number(m[1])) : reject(new Error(`unexpected first line: ${l}`));
    });
    server.once('exit', (code) => reject(new Error(`hark serve exited with ${code}`)));
  });
  return { server, port };
}

// SIGTERM, and the exit code once it has exited.
export async function stopServe(server) {
  if (!server || server.exitCode !== null) return server ? server.exitCode : null;
  const exited = new Promise((resolve) => server.once('exit', (code) => resolve(code)));
  server.kill('SIGTERM');
  return exited;
}
