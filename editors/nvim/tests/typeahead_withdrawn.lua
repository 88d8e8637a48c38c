-- The type-ahead guard when the server withdraws the question before the float is armed: the
-- approval prompt and the review close, answer nothing (vim.NIL), and give the keys they held back
-- to Neovim in the order typed, special keys intact (read back here with getchar()). The handlers
-- are called as Neovim calls them; no server is needed.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

--- Type `keys` over the float of `module` as soon as it shows, then withdraw it once all were held.
local function type_then_withdraw(module, count, withdraw)
  local typed = false
  local timer = H.uv.new_timer()
  H.timers = H.timers or {}
  table.insert(H.timers, timer)
  timer:start(10, 10, vim.schedule_wrap(function()
    local float = module.current
    if not float or not float.win then
      return
    end
    if not typed then
      typed = true
      api.nvim_input('ab<Left><BS>é')
    elseif #float.guard.held == count then
      timer:stop()
      H.note('footer', api.nvim_buf_get_lines(float.buf, -2, -1, false)[1])
      withdraw(float)
    end
  end))
end

--- The keys waiting in Neovim's typeahead, read with getchar(0).
local function typeahead()
  local keys = {}
  while true do
    local code = vim.fn.getchar(0)
    if code == 0 or code == '' then
      return keys
    end
    if type(code) == 'number' then
      table.insert(keys, vim.fn.nr2char(code))
    else -- a special key: its name where Neovim can give it (0.8+), else the internal form
      table.insert(keys, vim.fn.exists('*keytrans') == 1 and vim.fn.keytrans(code) or code)
    end
  end
end

local named = vim.fn.exists('*keytrans') == 1
local expected = { 'a', 'b', named and '<Left>' or '\128kl', named and '<BS>' or '\128kb', 'é' }

H.run(function()
  require('pi_lsp').setup({ prompt_guard_ms = 60000, autostart = false }) -- never armed in this test
  local approvals = require('pi_lsp.approvals')
  type_then_withdraw(approvals, 5, function(prompt)
    approvals.approval_withdrawn(nil, { approvalId = prompt.id, reason = 'timeout', decision = 'deny' }, {})
  end)
  local reply = H.call_handler(approvals.request_approval, {
    approvalId = 'a1', title = 'Run bash: rm -rf build', message = 'pi: allow bash?',
    actions = { { id = 'allowOnce', title = 'Allow once' }, { id = 'deny', title = 'Deny' } }, timeoutMs = 60000,
  }, {}, 20000)
  H.check('the withdrawn approval answered nothing', reply.result == vim.NIL, reply)
  H.check('the prompt is closed', approvals.current == nil)
  H.check('its footer said the keys were held', (H.notes.footer or ''):find('keys held until you stop typing', 1, true), H.notes.footer)
  local keys = typeahead()
  H.check('the held keys are back in the typeahead, in order, special keys intact', vim.deep_equal(keys, expected), keys)

  local review = require('pi_lsp.review')
  type_then_withdraw(review, 5, function(float)
    review.review_withdrawn(nil, { reviewId = float.id, reason = 'timeout' }, {})
  end)
  reply = H.call_handler(review.review_edit, {
    reviewId = 'r1', toolName = 'edit', path = 'greet.py', timeoutMs = 60000,
    hunks = { { id = 'h1', oldStart = 1, oldLines = 1, newStart = 1, newLines = 1, oldText = 'a\n', newText = 'b\n' } },
  }, {}, 20000)
  H.check('the withdrawn review answered nothing', reply.result == vim.NIL, reply)
  H.check('the review is closed', review.current == nil)
  keys = typeahead()
  H.check('the keys held by the review are back too', vim.deep_equal(keys, expected), keys)
end)
