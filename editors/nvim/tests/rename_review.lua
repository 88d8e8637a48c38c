-- Review before apply of a rename (issue 18, pi.edit.review = "before"): the rename of `helper`
-- (lib.py and main.py, through pi/executeToolCall with the user's real pylsp, $PI_TEST_PYLSP) comes
-- up as one review float per file, in turn; `A` accepts every hunk of the first file and `X`
-- rejects the second: only the first file is renamed (and saved), and the result names the file
-- the user rejected.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

local LIB = 'def helper(x):\n    return x + 1\n'
local MAIN = 'from lib import helper\n\nprint(helper(2))\n'

local function has(text, needle)
  return type(text) == 'string' and text:find(needle, 1, true) ~= nil
end

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = { maxRetries = 0, edit = { review = 'before', verifyTimeoutSeconds = 10, applyTimeoutSeconds = 20 } },
    attach_timeout_ms = 15000,
    language_server_timeout_ms = 15000,
  })
  local pylsp = H.autostart('pylsp', { vim.env.PI_TEST_PYLSP }, 'python')
  vim.o.hidden = true
  vim.cmd('edit main.py')
  local pi = H.client()
  H.check('pi-lsp started', pi ~= nil)
  H.check('pylsp attached and initialized', H.wait(20000, function() return pylsp() and pylsp().initialized end))

  local keys = { 'A', 'X' }
  local seen, handled = {}, nil
  local timer = H.uv.new_timer()
  timer:start(20, 20, vim.schedule_wrap(function()
    local review = require('pi_lsp.review').current
    if not H.armed(review) or review == handled then
      return
    end
    handled = review
    table.insert(seen, table.concat(api.nvim_buf_get_lines(review.buf, 0, -1, false), '\n'))
    if keys[#seen] then
      api.nvim_input(keys[#seen])
    end
  end))
  H.timers = { timer }

  local reply = nil
  require('pi_lsp.client').request(pi, 'pi/executeToolCall', {
    toolCall = { id = 'r1', name = 'rename', arguments = { path = 'lib.py', line = 1, symbol = 'helper', newName = 'assist' } },
  }, function(err, result)
    reply = { err = err, result = result }
  end)
  H.check('the rename answered', H.wait(40000, function() return reply ~= nil end), reply)
  local text = ''
  for _, part in ipairs(reply and reply.result and reply.result.content or {}) do
    text = text .. (part.text or '')
  end
  H.note('result', text)
  H.check('two review floats, one per file', #seen == 2, seen)
  local first, second = seen[1] or '', seen[2] or ''
  local lib_first = has(first, 'rename lib.py')
  local accepted, rejected = lib_first and 'lib.py' or 'main.py', lib_first and 'main.py' or 'lib.py'
  H.check('each float names the rename and its file', (has(first, 'pi-lsp review · rename lib.py · 1 hunk')
    and has(second, 'pi-lsp review · rename main.py · 2 hunks')) or (has(first, 'pi-lsp review · rename main.py · 2 hunks')
    and has(second, 'pi-lsp review · rename lib.py · 1 hunk')), seen)
  H.check('the lib.py float shows the renamed definition as a diff',
    has(lib_first and first or second, '-def helper(x):') and has(lib_first and first or second, '+def assist(x):'), seen)
  H.check('the rename succeeded for the accepted file', reply and reply.result and not reply.result.isError, text)
  H.check('the result names the file the user rejected', has(text, 'the user rejected every hunk of the rename in')
    and has(text, rejected), text)
  local want = { ['lib.py'] = LIB, ['main.py'] = MAIN }
  want[accepted] = want[accepted]:gsub('helper', 'assist')
  for name, content in pairs(want) do
    local b = H.buf(name)
    H.check(name .. ': buffer as reviewed', b == nil or H.text(b) == content, b and H.text(b))
    H.check(name .. ': disk as reviewed', H.read(name) == content, H.read(name))
  end
  H.check('no review is left open', require('pi_lsp.review').current == nil)
end)
