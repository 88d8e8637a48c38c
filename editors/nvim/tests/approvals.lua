-- Approvals in the plugin's own prompt (issue 15; replay session nvim_approvals.jsonl): the bash
-- call's prompt has no preselected action and <Esc> denies it at once; the read outside the
-- workspace (read-only scope) has "Allow once" preselected and <CR> confirms it. The transcript
-- shows the question and each outcome.
local H = dofile(vim.env.PI_TEST_HELPERS)
local uv = H.uv

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, approvals = { timeoutSeconds = 60 } },
  })
  local keys, n = { '<Esc>', '<CR>' }, 0
  local asked = H.approver(function()
    n = n + 1
    return keys[n]
  end)
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi clean up and read the notes')
  H.check('the run ended', H.wait_run(30000))
  local status = asked[1] and asked[1].status
  H.check('the status said the agent waits for the user',
    status == 'pi: waiting for your approval: Run bash: touch denied.txt', status)
  H.check('the status is idle after the run', require('pi_lsp').status() == '', require('pi_lsp').status())
  H.check('two prompts were shown', #asked == 2, asked)
  local first = table.concat(asked[1] and asked[1].lines or {}, '\n')
  local second = table.concat(asked[2] and asked[2].lines or {}, '\n')
  H.check('the bash prompt names the command', first:find('Run bash: touch denied.txt', 1, true), first)
  H.check('the bash prompt preselects nothing', not first:find('›', 1, true), first)
  H.check('the read prompt preselects Allow once (read-only scope)', second:find('› [1] Allow once', 1, true), second)
  H.check('the denied command did not run', uv.fs_stat('denied.txt') == nil)
  H.check('the transcript shows the denial on the call line', H.transcript_row('✗ bash touch denied.txt · denied by you'))
  H.check('the denial was the user\'s, not a timeout', not H.transcript_has('timed out'))
  H.check('the transcript shows the allowed read', H.transcript_row('✓ read ../outside.txt · allowed once'))
  H.check('the prompt is closed', require('pi_lsp.approvals').current == nil)
  H.check('the run ended normally', require('pi_lsp.run').last_reply.stopReason == 'stop', require('pi_lsp.run').last_reply)
end)
