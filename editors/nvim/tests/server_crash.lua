-- Bad input: the server dies mid-run (its own bash call kills it, replay session nvim_crash.jsonl).
-- The transcript says what happened, the run is over, the editor keeps working, and the next :Pi
-- starts a new server that finishes a run.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, approvals = { timeoutSeconds = 10 } },
  })
  H.approver(function() return '1' end) -- Allow once
  vim.cmd('edit greet.py')
  local greet = api.nvim_get_current_buf()
  local first = H.client()
  H.check('client started', first ~= nil)

  vim.cmd('Pi run the check')
  H.check('the run ended', H.wait_run(30000))
  H.check('the transcript says the server exited', H.transcript_has('!! pi-lsp exited during the run'))
  H.check('the transcript names the signal', H.transcript_has('signal 9'))
  H.check('the run reports the exit', require('pi_lsp.run').last_reply.error == 'server exited', require('pi_lsp.run').last_reply)

  api.nvim_buf_set_lines(greet, 0, 1, false, { 'def hello():' })
  vim.cmd('silent undo')
  H.check('the editor keeps working (change and undo)', api.nvim_buf_get_lines(greet, 0, 1, false)[1] == 'def greet():')

  vim.cmd('PiLog')
  local log = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.check(':PiLog shows the exit', log:find('pi-lsp exited (code', 1, true) ~= nil, log)
  vim.cmd('close')

  api.nvim_set_current_buf(greet)
  vim.cmd('1,2Pi again please') -- the selected lines go along (the replay checks the request)
  H.check('the second run ended', H.wait_run(30000))
  local reply = require('pi_lsp.run').last_reply
  H.check('a new server finished the second run', type(reply) == 'table' and reply.stopReason == 'stop', reply)
  H.check('the transcript shows the second run', H.transcript_has('Back after the restart.'))
  local second = H.client()
  H.check('the buffer is attached to the new client', second and second.id ~= first.id
    and vim.lsp.buf_is_attached(greet, second.id), { first and first.id, second and second.id })
end)
