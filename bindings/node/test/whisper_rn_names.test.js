'use strict'
// whisper.rn names an app uses that have no meaning off a phone: AudioSessionIos (constants;
// setters resolve without effect, getters reject as whisper.rn's do off iOS), coreMLModelAsset and
// the realtime audioSession options (accepted, ignored, said in the debug log), WhisperContext.ptr.
const test = require('node:test')
const assert = require('node:assert/strict')
const hark = require('..')
const { micro, fast } = require('./helpers')

test('AudioSessionIos: whisper.rn\'s constants; setters resolve, getters reject off iOS', async () => {
  const { AudioSessionIos, AudioSessionCategoryIos, AudioSessionCategoryOptionIos, AudioSessionModeIos } = hark
  assert.equal(AudioSessionIos.Category.PlayAndRecord, 'PlayAndRecord')
  assert.equal(AudioSessionIos.CategoryOption.MixWithOthers, 'MixWithOthers')
  assert.equal(AudioSessionIos.Mode.Default, 'Default')
  assert.deepEqual(Object.keys(AudioSessionCategoryIos),
                   ['Ambient', 'SoloAmbient', 'Playback', 'Record', 'PlayAndRecord', 'MultiRoute'])
  assert.equal(Object.keys(AudioSessionCategoryOptionIos).length, 7)
  assert.equal(Object.keys(AudioSessionModeIos).length, 8)
  await AudioSessionIos.setCategory(AudioSessionIos.Category.PlayAndRecord, [AudioSessionIos.CategoryOption.MixWithOthers])
  await AudioSessionIos.setMode(AudioSessionIos.Mode.Default)
  await AudioSessionIos.setActive(true)
  await assert.rejects(AudioSessionIos.getCurrentCategory(), /Only supported on iOS/)
  await assert.rejects(AudioSessionIos.getCurrentMode(), /Only supported on iOS/)
})

test('coreMLModelAsset and audioSessionOnStartIos / OnStopIos are accepted and ignored (debug log); ptr', async () => {
  const lines = []
  const sub = hark.addNativeLogListener((level, text) => lines.push([level, text]))
  await hark.toggleNativeLog(true)
  assert.equal(hark.isNativeLogEnabled(), true)
  try {
    const ctx = await hark.initWhisper({ filePath: micro, coreMLModelAsset: { filename: 'ggml-tiny-encoder.mlmodelc', assets: [] } })
    assert.equal(typeof ctx.ptr, 'number')
    assert.ok(ctx.ptr > 0 && Number.isSafeInteger(ctx.ptr))
    const other = await hark.initWhisper({ filePath: micro })
    assert.notEqual(other.ptr, ctx.ptr)
    const rt = await ctx.transcribeRealtime({
      ...fast,
      audioSource: 'push',
      audioSessionOnStartIos: { category: 'PlayAndRecord', options: ['MixWithOthers'], mode: 'Default' },
      audioSessionOnStopIos: 'restore',
    })
    rt.end()
    await rt.done
    const debug = lines.filter(([level]) => level === 'debug').map(([, text]) => text)
    assert.ok(debug.some((t) => /coreMLModelAsset.*ignored/.test(t)), debug.join('\n'))
    assert.ok(debug.some((t) => /audioSessionOnStartIos.*ignored/.test(t)), debug.join('\n'))
    await ctx.release()
    await other.release()
  } finally {
    await hark.toggleNativeLog(false)
    sub.remove()
  }
  assert.equal(hark.isNativeLogEnabled(), false)
})
