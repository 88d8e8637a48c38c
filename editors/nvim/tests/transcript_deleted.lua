-- The user deletes the transcript (`:bdelete`, as for any buffer) while a call waits for its
-- approval (replay session nvim_transcript_deleted.jsonl), then allows it: the rest of the run
-- goes into a fresh transcript (the deleted one lost its lines and marks) without an error.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, approvals = { timeoutSeconds = 60 } },
  })
  local t = require('pi_lsp.transcript')
  local deleted
  local asked = H.approver(function()
    deleted = t.buffer()
    vim.cmd('bdelete! ' .. deleted)
    return 'o' -- Allow once
  end)
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi touch a file')
  H.check('the run ended', H.wait_run(30000))
  H.check('the prompt came up once', #asked == 1, asked)
  H.check('the run ended normally', require('pi_lsp.run').last_reply.stopReason == 'stop', require('pi_lsp.run').last_reply)
  local b = t.buffer()
  H.check('a fresh transcript replaced the deleted one', deleted and b ~= deleted and not api.nvim_buf_is_valid(deleted), { deleted, b })
  H.check('it is still a read-only scratch buffer', vim.bo[b].buftype == 'nofile' and not vim.bo[b].modifiable
    and api.nvim_buf_get_name(b) == 'pi://transcript', { vim.bo[b].buftype, vim.bo[b].modifiable, api.nvim_buf_get_name(b) })
  H.check('the approval is shown', H.transcript_row('  approval: allowed once'), t.lines())
  H.check('the finished call is shown', H.transcript_row('✓ bash'), t.lines())
  H.check('with its output', H.transcript_has('  │ still here'), t.lines())
  H.check('and the end of the run', H.transcript_row('— done —'), t.lines())
  H.check('no error reached the user', not H.notified('rror'), H.notifications)
end)
