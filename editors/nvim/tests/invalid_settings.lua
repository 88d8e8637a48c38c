-- A user with several invalid settings (and a model that is set but invalid): every problem is
-- on screen at once (one message, one line each), :PiLog has each once, and :Pi says pi.model is
-- invalid and why instead of "not set".
local H = dofile(vim.env.PI_TEST_HELPERS)

local PROBLEMS = { 'pi.model:', 'pi.maxTurns:', 'pi.edit.review:', 'pi.bash.sandbox:', 'pi.activeTools:' }

local function count(lines, pattern)
  local n = 0
  for _, line in ipairs(lines) do
    if line:find(pattern, 1, true) then
      n = n + 1
    end
  end
  return n
end

H.run(function()
  require('pi_lsp').setup({
    settings = {
      model = 5, maxTurns = 'many', edit = { review = 'sometimes' }, bash = { sandbox = 'weird' },
      activeTools = { 'read', 'nosuchtool' }, baseUrl = 'http://127.0.0.1:9/v1',
    },
  })
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  H.check('the problems were shown', H.wait(20000, function() return H.notified('problems in the pi settings') end),
    H.notifications)
  H.wait(500, function() return false end) -- a second (initialized) report would arrive meanwhile
  local shown = vim.tbl_filter(function(n) return n.message:find('pi.', 1, true) end, H.notifications)
  H.check('one message', #shown == 1, shown)
  local lines = vim.split(shown[1] and shown[1].message or '', '\n', { plain = true })
  for _, problem in ipairs(PROBLEMS) do
    H.check('shown: ' .. problem, count(lines, problem) == 1, lines)
  end
  -- what the user sees in the message area: the whole message (:messages keeps what was echoed)
  local messages = vim.fn.execute('messages')
  for _, problem in ipairs(PROBLEMS) do
    H.check('in :messages: ' .. problem, messages:find(problem, 1, true) ~= nil, messages)
  end
  H.check('logged', H.wait(10000, function()
    return count(require('pi_lsp.transcript').log_lines(), 'pi.activeTools:') > 0
  end))
  vim.cmd('PiLog')
  local log = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for _, problem in ipairs(PROBLEMS) do
    H.check(':PiLog has it once: ' .. problem, count(log, problem) == 1, log)
  end
  vim.cmd('close')
  vim.cmd('Pi fix it')
  H.check('the refused run ended', H.wait_run(20000))
  H.check('the transcript says pi.model is invalid and why',
    H.transcript_has('pi.model is invalid: Input should be a valid string (got 5)'), require('pi_lsp.transcript').lines())
  H.check('not "not set"', not H.transcript_has('not set'), require('pi_lsp.transcript').lines())
end)
