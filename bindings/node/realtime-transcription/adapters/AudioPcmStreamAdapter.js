'use strict'
// whisper.rn's microphone adapter name (over @fugood/react-native-audio-pcm-stream there): here
// the microphone through PulseAudio, so an app's deep import keeps its path.
const { MicrophoneAudioStreamAdapter } = require('./MicrophoneAudioStreamAdapter')

class AudioPcmStreamAdapter extends MicrophoneAudioStreamAdapter {}

module.exports = { AudioPcmStreamAdapter }
