// An audio source of hark's (the microphone through PulseAudio, or a file played in real time)
// delivering its audio to JavaScript, for the AudioStreamInterface adapters of
// realtime-transcription/ (whisper.rn's audio stream shape): chunks of 16 kHz mono 16-bit PCM.
//
//   openAudioSource({ kind: 'microphone', device } | { kind: 'file', path, speed, chunkMs },
//                   onData(Uint8Array), onEnd(error | null)) -> { stop(): void }
//
// onEnd runs once, after the last onData: null at the end of a file or after stop(), a message
// when the source failed. stop() returns once no more audio will be captured; it is idempotent.
#pragma once
#include <napi.h>

namespace hark_node {

Napi::Value open_audio_source(const Napi::CallbackInfo& info);

}  // namespace hark_node
