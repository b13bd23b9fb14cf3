'use strict'
// The table of bad options every front end runs (tests/frontends/bad_options.json): each is
// refused by the library's one check, here as a rejected promise whose message is the library's
// (with this API's name for the option) and whose code is the library's category,
// ERR_HARK_<CATEGORY>, the word the C API, the CLI and the server give for the same failure.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('fs')
const path = require('path')
const hark = require('..')
const { micro, tdrz, speechWav } = require('./helpers')

const table = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../tests/frontends/bad_options.json'), 'utf8'))

test('bad options: the library refuses each with the same message and category as every front end', async () => {
  const multilingual = await hark.initWhisper({ filePath: micro })
  const englishOnly = await hark.initWhisper({ filePath: tdrz }) // micro.en
  assert.ok(table.rows.length >= 8)
  for (const row of table.rows) {
    const ctx = row.english_only ? englishOnly : multilingual
    const options = { temperatureInc: 0, [row.node]: row.value }
    await assert.rejects(ctx.transcribe(speechWav(), options).promise, (e) => {
      assert.ok(e instanceof Error, `${row.field}: an Error`)
      assert.ok(e.message.includes(row.message), `${row.field}: '${e.message}' holds '${row.message}'`)
      assert.equal(e.code, `ERR_HARK_${row.code.toUpperCase()}`, row.field)
      assert.equal(e.field, row.field)
      if (row.code === 'invalid_argument') assert.ok(e.message.includes(`(option '${row.node}')`), e.message)
      return true
    })
  }
  // Still serving after all of them.
  const r = await multilingual.transcribe(speechWav(), { temperatureInc: 0 }).promise
  assert.equal(r.isAborted, false)
  await multilingual.release()
  await englishOnly.release()
})
