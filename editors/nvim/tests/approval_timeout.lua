-- The server's approval timeout (1 s here; replay session nvim_approval_timeout.jsonl): nobody
-- answers, pi/approvalWithdrawn closes the prompt, the transcript says it timed out and was
-- denied, and a key pressed afterwards is not taken as an answer.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, approvals = { timeoutSeconds = 1 } },
  })
  local asked = H.approver(function() return nil end) -- the user looks away
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi touch a file')
  H.check('the prompt came up', H.wait(20000, function() return #asked == 1 end), asked)
  local prompt = asked[1] and asked[1].prompt or {}
  H.check('the run ended', H.wait_run(30000))
  H.check('the prompt was withdrawn by the server', type(prompt.withdrawn) == 'table'
    and prompt.withdrawn.reason == 'timeout' and prompt.withdrawn.decision == 'deny', prompt.withdrawn)
  H.check('its window is closed', prompt.win and not api.nvim_win_is_valid(prompt.win), prompt.win)
  H.check('no prompt is left', require('pi_lsp.approvals').current == nil)
  api.nvim_input('o') -- the late "Allow once"
  H.wait(200, function() return false end)
  H.check('the command never ran', H.uv.fs_stat('late.txt') == nil)
  H.check('the transcript says it timed out and was denied',
    H.transcript_row('✗ bash touch late.txt · approval timed out (no answer within 1 s; the fallback is deny): denied'))
  H.check('nothing says it was allowed', not H.transcript_has('allowed'))
  H.check('the run ended normally', require('pi_lsp.run').last_reply.stopReason == 'stop', require('pi_lsp.run').last_reply)
end)
