--- pi_lsp.typeahead: the type-ahead guard of the modal floats (the approval prompt in
--- `pi_lsp.approvals`, the edit review in `pi_lsp.review`, the undo question of `pi_lsp.changes`).
---
--- Those floats read keys themselves with `getchar(0)` while they wait, so a float that appears
--- while the user is typing would take the next keys as answers: `some words` typed in insert
--- mode would answer `s` (Allow for this session), `:qa!` typed in normal mode `q` (deny).
---
--- Rule: after a float opens it is not *armed* until no key has arrived for `guard_ms`
--- milliseconds (`prompt_guard_ms` in `setup()`, default 500; 0 arms at once). A key read before
--- that is not an answer: it is held, and every key arriving resets the wait. When the float
--- closes for any reason (answered, withdrawn by the server, timed out, replaced by another
--- float), the held keys are given back to Neovim in the order they were typed, ahead of
--- anything typed since, as if typed (`nvim_feedkeys` flags `it`, remapped as usual), so they
--- land where the user meant them: in the buffer, on the command line, as normal-mode commands.
--- Special keys (`<BS>`, arrows: `getchar()` gives them as strings in Neovim's internal form)
--- go back unchanged; plain characters (numbers from `getchar()`) are escaped for the typeahead.
---
--- Once armed, a key the float knows (an answer, a move, a dismissal) is taken as such. Any other
--- key means the user is typing something else (`:PiAbort`, text): the float disarms and holds it
--- and the keys after it, as before arming, and arms again once they stop (`Guard:stray`).
--- Without that, a letter inside a command typed over an armed prompt would answer it: the `o`
--- of `:PiAbort` allowed a command once.
---
--- One exception: under `:normal` or `nvim_feedkeys(..., 'x')` Neovim answers every read with
--- <Esc> once its typeahead is used up, without end. More than `MAX_BURST` keys in one wait tick
--- (20 ms) ending in <Esc> is that, not typing: the guard arms and the float gets the <Esc> (it
--- dismisses: deny, cancel), and those <Esc>s are not given back.
local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

--- Keys in one wait tick beyond which an <Esc> means Neovim has no typed key to give (`:normal`).
local MAX_BURST = 100
local ESC = 27

--- A guard's state: `{guard_ms, armed, last (uv.now() of the last key or the opening, ms), held}`.
local Guard = {}
Guard.__index = Guard

--- A new guard for a float opening now; `guard_ms` (number, ms) defaults to the configured
--- `prompt_guard_ms`.
function M.new(guard_ms)
  if guard_ms == nil then
    guard_ms = require('pi_lsp.config').get().prompt_guard_ms
  end
  guard_ms = math.max(0, tonumber(guard_ms) or 0)
  return setmetatable({ guard_ms = guard_ms, armed = guard_ms == 0, last = uv.now(), held = {}, burst = 0 }, Guard)
end

--- Call on every wait tick: arms the guard once `guard_ms` passed without a key. Returns true
--- when it became armed just now (the float redraws its footer).
function Guard:tick()
  self.burst = 0
  if not self.armed and uv.now() - self.last >= self.guard_ms then
    self.armed = true
    return true
  end
  return false
end

--- Offer a key read with `getchar(0)` (a number or a string). Returns true when it was held
--- (not armed yet: it is not an answer), false when the float should handle it.
function Guard:hold(code)
  if self.armed then
    return false
  end
  self.burst = self.burst + 1
  if self.burst > MAX_BURST and code == ESC then
    -- `:normal`'s endless <Esc>: drop them, arm, and let the float take this one (dismiss)
    while self.held[#self.held] == ESC do
      table.remove(self.held)
    end
    self.armed = true
    return false
  end
  table.insert(self.held, code)
  self.last = uv.now()
  return true
end

--- Offer a key the armed float did not take (not one of its answers, moves or dismissals): the
--- float stops taking answers until no key has arrived for `guard_ms`, and the key is held like
--- those typed before arming. Returns true when it was held, false when the guard is off
--- (`guard_ms` 0: the key is ignored, as the float always did).
function Guard:stray(code)
  if self.guard_ms == 0 then
    return false
  end
  self.armed = false
  table.insert(self.held, code)
  self.last = uv.now()
  return true
end

--- The footer note while not armed (a string), else nil.
function Guard:note()
  if self.armed then
    return nil
  end
  return 'keys held until you stop typing'
end

--- Give the held keys back to Neovim, typed order first in the typeahead; the guard forgets them.
--- Safe to call more than once.
function Guard:release()
  local held = self.held
  self.held = {}
  -- each key is inserted at the start of the typeahead ('i'), so the last one goes first
  for i = #held, 1, -1 do
    local code = held[i]
    if type(code) == 'number' then
      -- a character: escape Neovim's special byte (0x80) should its UTF-8 form contain one
      pcall(api.nvim_feedkeys, vim.fn.nr2char(code), 'it', true)
    elseif type(code) == 'string' and code ~= '' then
      -- a special key in internal form (e.g. "\128kb" for <BS>): already escaped
      pcall(api.nvim_feedkeys, code, 'it', false)
    end
  end
end

return M
