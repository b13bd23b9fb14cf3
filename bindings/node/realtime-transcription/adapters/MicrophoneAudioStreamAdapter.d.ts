// whisper.rn's deep import path of an adapter; the types are in ../index.d.ts.
export { MicrophoneAudioStreamAdapter } from '../index'
