-- The edit review's type-ahead guard (replay session nvim_review.jsonl; run after startup so the
-- main loop handles the typed keys). The user is typing `some words ...` in insert mode in
-- dirty.txt when the review of greet.py appears: those keys decide nothing (without the guard
-- `r` would reject a hunk), they end up in dirty.txt in order, and the deliberate keys after the
-- pause decide (`a`, then `R` with a reason). The review of the write appears; the user leaves
-- insert mode and types a `:` command with <Left>, <Right> and <BS> in it: it runs as typed, and
-- `X` after the pause rejects the write. `A` accepts the edit of closed.txt.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run_async(function(done)
  require('pi_lsp').setup({
    prompt_guard_ms = 400, -- far above the 20 ms between the typist's keys
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, edit = { review = 'before' } },
  })
  vim.cmd('edit dirty.txt')
  local dirty = api.nvim_get_current_buf()
  H.check('client started', H.client() ~= nil)
  local approvals = require('pi_lsp.review') -- the float watched below
  local state, second = { typed = '', seen = {} }, nil -- filled by H.type_over_floats
  local seen = state.seen

  local function finish_checks()
    local lines = api.nvim_buf_get_lines(dirty, 0, -1, false)
    H.check('every key typed in insert mode is in the buffer, in order', lines[#lines] == state.typed,
      { line = lines[#lines], typed = state.typed })
    H.check('the : command typed over the second review ran as typed (<Left>, <Right>, <BS> kept)',
      vim.g.typed == 'yzes', vim.g.typed)
    H.check('two reviews were watched', state.first ~= nil and second ~= nil)
    local held = table.concat(seen.first_held or {}, '\n')
    H.check('while keys are held the footer says so', held:find('keys held until you stop typing', 1, true), held)
    H.check('and no hunk was decided by them', held:find('? hunk 1/2', 1, true) and held:find('? hunk 2/2', 1, true), held)
    local armed = table.concat(seen.first_armed or {}, '\n')
    H.check('once armed the footer only counts down', armed:find('\n undecided hunks are rejected in', 1, true), armed)
    local greet = H.read('greet.py') or ''
    H.check('the deliberate a accepted the first hunk, R rejected the second', greet:find('return "hello"', 1, true)
      and greet:find('return "bye"', 1, true), greet)
    H.check('the deliberate X rejected the write', H.uv.fs_stat('notes.txt') == nil)
    H.check('A accepted the edit of closed.txt', H.read('closed.txt') == 'FIRST\nsecond\n', H.read('closed.txt'))
    H.check('no review is left', approvals.current == nil)
    H.check('the run ended normally', require('pi_lsp.run').last_reply.stopReason == 'stop',
      require('pi_lsp.run').last_reply)
    done()
  end

  -- the second review: leave insert mode and type a command, slowly, then answer; then the third
  local function on_second(prompt)
    second = prompt
    H.type_slowly(H.typed_command_keys(), 20, H.guarded(function()
      H.answer_when_armed(prompt, 'X', seen, nil, function()
        local third = H.uv.new_timer()
        table.insert(H.timers, third)
        third:start(20, 20, vim.schedule_wrap(H.guarded(function()
          local review = approvals.current
          if review and review ~= prompt and review.win then
            third:stop()
            H.answer_when_armed(review, 'A', seen, nil, function() H.await_typed_end(finish_checks) end)
          end
        end)))
      end)
    end))
  end

  -- the typist: insert mode at a new last line, a key every 20 ms; `:Pi` is started while typing
  H.type_over_floats(state, approvals, 'change the greetings', 'some words to type ', 'aRkeep bye<CR>', on_second)
end)
