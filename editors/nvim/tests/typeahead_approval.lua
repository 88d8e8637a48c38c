-- The approval prompt's type-ahead guard (replay session nvim_approvals.jsonl; run after startup
-- so the main loop handles the typed keys). The user is typing `some words ...` in insert mode
-- when the bash prompt appears: those keys answer nothing (without the guard `s` would allow the
-- command for the session), they end up in the buffer in order, and the deliberate `d` after the
-- pause denies. The read prompt appears; the user leaves insert mode and types a `:` command with
-- <Left>, <Right> and <BS> in it: the command runs as typed, and `o` after the pause allows once.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run_async(function(done)
  require('pi_lsp').setup({
    prompt_guard_ms = 400, -- far above the 20 ms between the typist's keys
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, approvals = { timeoutSeconds = 60 } },
  })
  vim.cmd('edit greet.py')
  local greet = api.nvim_get_current_buf()
  H.check('client started', H.client() ~= nil)
  local approvals = require('pi_lsp.approvals')
  local state, second = { typed = '', seen = {} }, nil -- filled by H.type_over_floats
  local seen = state.seen

  local function finish_checks()
    local lines = api.nvim_buf_get_lines(greet, 0, -1, false)
    H.check('every key typed in insert mode is in the buffer, in order', lines[#lines] == state.typed,
      { line = lines[#lines], typed = state.typed })
    H.check('the : command typed over the read prompt ran as typed (<Left>, <Right>, <BS> kept)',
      vim.g.typed == 'yzes', vim.g.typed)
    H.check('two prompts were shown', state.first ~= nil and second ~= nil)
    local held = table.concat(seen.first_held or {}, '\n')
    H.check('while keys are held the footer says so', held:find('keys held until you stop typing', 1, true), held)
    H.check('and offers no choice yet', not held:find('o/s/d choose', 1, true), held)
    local armed = table.concat(seen.first_armed or {}, '\n')
    H.check('once armed the footer offers the choices', armed:find('1-3 or o/s/d choose', 1, true), armed)
    H.check_denied_then_allowed_once(approvals, 'the typed s allowed nothing, the deliberate d denied')
    done()
  end

  -- the read prompt: leave insert mode and type a command, slowly, then answer
  local function on_second(prompt)
    second = prompt
    H.type_slowly(H.typed_command_keys(), 20, H.guarded(function()
      H.answer_when_armed(prompt, 'o', seen, nil, function() H.await_typed_end(finish_checks) end)
    end))
  end

  -- the typist: insert mode at a new last line, a key every 20 ms; `:Pi` is started while typing
  H.type_over_floats(state, approvals, 'clean up and read the notes', 'some words to type ', 'd', on_second)
end)
