-- Review before apply, nobody answers (replay session nvim_review_timeout.jsonl; review timeout 1 s):
-- pi/reviewWithdrawn closes the float, nothing is written, and a key pressed afterwards is not
-- taken as an answer.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0,
      edit = { review = 'before', reviewTimeoutSeconds = 1 } },
  })
  local review_mod = require('pi_lsp.review')
  local seen = nil
  local timer = H.uv.new_timer()
  timer:start(20, 20, vim.schedule_wrap(function()
    if not seen and review_mod.current and review_mod.current.win then
      seen = review_mod.current -- the user looks away
    end
  end))
  H.timers = { timer }
  vim.cmd('edit greet.py')
  local greet = api.nvim_get_current_buf()
  local before = H.text(greet)
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi change the greeting')
  H.check('the run ended', H.wait_run(30000))
  H.check('the review came up', seen ~= nil)
  seen = seen or {}
  H.check('the server withdrew it on its timeout', type(seen.withdrawn) == 'table' and seen.withdrawn.reason == 'timeout',
    seen.withdrawn)
  H.check('its window is closed', seen.win and not api.nvim_win_is_valid(seen.win), seen.win)
  H.check('no review is left open', review_mod.current == nil)
  api.nvim_input('A') -- the late "accept all"
  H.wait(200, function() return false end)
  H.check('nothing was written', H.text(greet) == before and H.read('greet.py') == before, H.text(greet))
  H.check('the run ended normally', require('pi_lsp.run').last_reply.stopReason == 'stop', require('pi_lsp.run').last_reply)
end)
