// whisper.rn's deep import path of its microphone adapter; here the microphone through PulseAudio.
import { MicrophoneAudioStreamAdapter } from '../index'
export declare class AudioPcmStreamAdapter extends MicrophoneAudioStreamAdapter {}
