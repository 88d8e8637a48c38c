-- :PiChanges `P` (issue 18; replay session nvim_prompts.jsonl): two prompts of one session each
-- change one hunk of greet.py (each prompt is two model turns); `P` takes back only the last
-- prompt's hunk, the first prompt's stays.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0,
      edit = { verifyTimeoutSeconds = 5, applyTimeoutSeconds = 10 } },
  })
  local changes = require('pi_lsp.changes')
  vim.cmd('edit greet.py')
  local greet = api.nvim_get_current_buf()
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi say hello')
  H.check('the first run ended', H.wait_run(30000))
  vim.cmd('Pi now say ciao')
  H.check('the second run ended', H.wait_run(30000))
  local both = 'def greet():\n    return "hello"\n\n\ndef bye():\n    return "ciao"\n'
  H.check('both prompts changed greet.py', H.text(greet) == both, H.text(greet))
  vim.cmd('PiChanges')
  H.check('the change set came', H.wait(10000, function() return changes.idle() and changes.state.files ~= nil end))
  local lines = changes.lines()
  H.check('the keys line offers P', lines[2] ==
    'k keep · u undo hunk · U undo file · P undo last prompt · T undo all listed · <CR> open · d diff · r refresh · q close', lines)
  H.check('the session had two prompts', changes.state.current_prompt == 2, changes.state.current_prompt)
  api.nvim_set_current_win(vim.fn.bufwinid(changes.buffer()))
  api.nvim_feedkeys('P', 'mx', false)
  H.check('P settled', H.wait(10000, function() return changes.idle() and changes.state.files ~= nil end))
  H.check("P took back only the last prompt's hunk", H.wait(5000, function()
    return H.text(greet) == both:gsub('"ciao"', '"bye"')
  end), H.text(greet))
  H.check('P reports one hunk reverted', vim.tbl_contains(changes.lines(), 'reverted 1 hunk(s) · greet.py: reverted hunks'),
    changes.lines())
end)
