-- A command typed over an ARMED approval prompt (replay session nvim_approvals.jsonl; run after
-- startup so the main loop handles the typed keys). The bash prompt is on screen and armed; the
-- user, in normal mode, types `:let g:typed = ...` (a `d`, an `s`, an `e` among its letters) a
-- key every 20 ms: the `:` is none of the prompt's keys, so it disarms the prompt, the letters
-- after it answer nothing and are held, the footer says so; once the typing stops the prompt arms
-- again and the deliberate `d` denies. The held command then runs as typed. The read prompt is
-- answered `o` (allowed once).
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run_async(function(done)
  require('pi_lsp').setup({
    prompt_guard_ms = 400, -- far above the 20 ms between the typist's keys
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, approvals = { timeoutSeconds = 60 } },
  })
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  local approvals = require('pi_lsp.approvals')
  local seen, first = {}, nil

  local function finish_checks()
    H.check('the prompt stayed open through the typed command', seen.after_typing ~= nil, seen)
    local held = table.concat(seen.after_typing or {}, '\n')
    H.check('and its footer said the keys were held', held:find('keys held until you stop typing', 1, true), held)
    local armed = table.concat(seen.armed_again or {}, '\n')
    H.check('it armed again once the typing stopped', armed:find('1-3 or o/s/d choose', 1, true), armed)
    H.check('the command typed over the prompt ran as typed once it closed (<Left>, <Right>, <BS> kept)',
      vim.g.typed == 'yzes', vim.g.typed)
    H.check_denied_then_allowed_once(approvals, 'the typed d and s answered nothing, the deliberate d denied')
    done()
  end

  local function on_second(prompt)
    H.answer_when_armed(prompt, 'o', seen, nil, function() H.await_typed_end(finish_checks) end)
  end

  -- the command, in normal mode: H.typed_command_keys() without its leading <Esc> (an <Esc>
  -- is the prompt's own key: it denies)
  local keys = H.typed_command_keys()
  table.remove(keys, 1)
  vim.cmd('Pi clean up and read the notes')
  local watch = H.uv.new_timer()
  H.timers = H.timers or {}
  table.insert(H.timers, watch)
  watch:start(20, 20, vim.schedule_wrap(H.guarded(function()
    local prompt = approvals.current
    if not first and H.armed(prompt) then
      first = prompt
      H.type_slowly(keys, 20, H.guarded(function()
        if approvals.current == first then
          seen.after_typing = api.nvim_buf_get_lines(first.buf, 0, -1, false)
        end
        H.answer_when_armed(first, 'd', seen, 'armed_again', nil)
      end))
    elseif first and prompt and prompt ~= first and prompt.win then
      watch:stop()
      on_second(prompt)
    end
  end)))
end)
