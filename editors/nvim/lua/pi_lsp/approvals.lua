--- pi_lsp.approvals: pi-lsp's approval questions (APPROVALS_SPEC, issue 15) in a small floating
--- prompt of our own, because `vim.ui.select` cannot be closed from outside and the server may
--- withdraw a question (timeout, abort, cancel).
---
--- * `pi/requestApproval {approvalId, title, message, actions, defaultAction, timeoutMs}` ->
---   `{action}` or null. The client advertises it (`experimental.pi.approvals`).
--- * `pi/approvalWithdrawn {approvalId, reason, decision}`: the prompt closes at once and the
---   transcript says what happened ("approval timed out after 120 s: denied"); nothing the user
---   types afterwards counts.
--- * `window/showMessageRequest` (other servers' questions, or pi-lsp without the capability):
---   the same prompt with the request's actions.
---
--- The prompt is modal on every version: the handler waits in `vim.wait` and reads keys itself
--- with `getchar(0)` (Neovim 0.7 needs the answer before the handler returns; 0.10+ runs it in a
--- coroutine, where the same loop works). Keys: `1`-`9` or an action's first letter (`o` Allow
--- once, `s` session, `d` Deny) choose; `j`/`k` move; `<CR>` confirms the highlighted action
--- (nothing is highlighted unless the server gave a `defaultAction`, which it does only for
--- read-only scopes); `<Esc>`, `q` or `<C-c>` dismiss = deny, immediately.
---
--- Type-ahead guard (`pi_lsp.typeahead`): keys typed before the prompt is armed (until no key
--- came for `prompt_guard_ms`) are not answers; they are given back to Neovim, in order, when
--- the prompt closes, and the footer says they are held. A key that is none of the above once
--- armed (the `:` of `:PiAbort`) disarms the prompt the same way: the command's letters answer
--- nothing, and it runs when the prompt closes.
local M = {}

local api = vim.api
local float = require('pi_lsp.float')
local typeahead = require('pi_lsp.typeahead')
local uv = vim.uv or vim.loop
local NS = api.nvim_create_namespace('pi_lsp_approval')

--- The prompt on screen: `{id, buf, win, actions, selected, answered, choice, withdrawn, guard}`
--- or nil (`guard`: its `pi_lsp.typeahead` guard; `guard.armed` once keys are answers).
M.current = nil

--- Status for statuslines: the title of the server's question waiting for the user, else nil
--- (the plugin's own questions, `M.confirm`, are not the agent waiting).
function M.waiting()
  return M.current and not M.current.own and M.current.title or nil
end

local ESC, CTRL_C, CR = 27, 3, 13

local function close(prompt)
  if prompt.win and api.nvim_win_is_valid(prompt.win) then
    pcall(api.nvim_win_close, prompt.win, true)
  end
  if prompt.buf and api.nvim_buf_is_valid(prompt.buf) then
    pcall(api.nvim_buf_delete, prompt.buf, { force = true })
  end
  if M.current == prompt then
    M.current = nil
  end
  pcall(vim.cmd, 'redrawstatus!') -- statuslines showing require('pi_lsp').status()
  pcall(vim.cmd, 'redraw')
end

local function render(prompt)
  local lines = { ' ' .. prompt.title, '' }
  for _, line in ipairs(vim.split(prompt.message, '\n', { plain = true })) do
    table.insert(lines, ' ' .. line)
  end
  table.insert(lines, '')
  local first_action = #lines + 1
  for i, action in ipairs(prompt.actions) do
    local mark = i == prompt.selected and '›' or ' '
    table.insert(lines, string.format(' %s [%d] %s', mark, i, action.title))
  end
  table.insert(lines, '')
  local left = ''
  if prompt.deadline then
    local seconds = math.max(0, math.ceil((prompt.deadline - uv.now()) / 1000))
    left = string.format(' · denied by itself in %d s', seconds)
  end
  local held = prompt.guard and prompt.guard:note()
  if held then
    table.insert(lines, ' ' .. held .. left)
  else
    table.insert(lines, ' 1-' .. #prompt.actions .. ' or ' .. (prompt.hint or 'o/s/d choose · <Esc>/q deny') .. left)
  end
  vim.bo[prompt.buf].modifiable = true
  api.nvim_buf_set_lines(prompt.buf, 0, -1, false, lines)
  vim.bo[prompt.buf].modifiable = false
  api.nvim_buf_clear_namespace(prompt.buf, NS, 0, -1)
  api.nvim_buf_add_highlight(prompt.buf, NS, 'Title', 0, 0, -1)
  api.nvim_buf_add_highlight(prompt.buf, NS, 'Comment', #lines - 1, 0, -1)
  if prompt.selected then
    api.nvim_buf_add_highlight(prompt.buf, NS, 'PmenuSel', first_action + prompt.selected - 2, 0, -1)
  end
  return lines
end

local function open(prompt)
  prompt.buf = float.scratch('pi_approval')
  prompt.win = float.open_centered(prompt.buf, render(prompt), 20)
  vim.wo[prompt.win].wrap = true
  pcall(vim.cmd, 'redraw')
end

--- The action a key stands for: a digit, `o` (once), `s` (session), `d`/`n` (deny), else nil.
local WORDS = { o = 'once', s = 'session', d = 'deny', n = 'deny' }

local function action_of_key(prompt, key)
  local n = tonumber(key)
  if n and prompt.actions[n] then
    return n
  end
  local word = (prompt.words or WORDS)[key]
  for i, action in ipairs(prompt.actions) do
    local name = (tostring(action.id or '') .. ' ' .. tostring(action.title or '')):lower()
    if word and name:find(word, 1, true) then
      return i
    end
  end
  return nil
end

--- Handle one typed key; returns `done` (true when the prompt is answered or dismissed) and
--- `known` (false for a key that is none of the prompt's: the caller holds it, `Guard:stray`).
local function on_key(prompt, code)
  if code == ESC or code == CTRL_C then
    prompt.answered = true
    return true, true
  end
  if code == CR then
    if prompt.selected then
      prompt.choice, prompt.answered = prompt.selected, true
      return true, true
    end
    return false, true
  end
  local key = type(code) == 'number' and vim.fn.nr2char(code) or tostring(code)
  if key == 'q' then
    prompt.answered = true
    return true, true
  end
  if key == 'j' or key == 'k' then
    local n = #prompt.actions
    local at = prompt.selected or (key == 'j' and 0 or n + 1)
    prompt.selected = math.max(1, math.min(n, at + (key == 'j' and 1 or -1)))
    render(prompt)
    pcall(vim.cmd, 'redraw')
    return false, true
  end
  local index = action_of_key(prompt, key:lower())
  if index then
    prompt.choice, prompt.answered = index, true
    return true, true
  end
  return false, false
end

--- Show `prompt` and wait for the answer. Returns the chosen action (a table) or nil (dismissed,
--- withdrawn, or no answer within `limit_ms`).
local function ask(prompt, limit_ms)
  if M.current then
    close(M.current) -- one prompt at a time; the older one counts as dismissed
  end
  M.current = prompt
  prompt.guard = typeahead.new()
  open(prompt)
  pcall(vim.cmd, 'redrawstatus!')
  local last_second = -1
  vim.wait(limit_ms, function()
    if prompt.withdrawn or prompt.answered then
      return true
    end
    local disarmed = false
    while true do
      local ok, code = pcall(vim.fn.getchar, 0)
      if not ok or code == 0 or code == '' then
        break
      end
      if not prompt.guard:hold(code) then
        local done, known = on_key(prompt, code)
        if done then
          return true
        end
        -- typing something else over the armed prompt (`:PiAbort`): its letters are no answers
        disarmed = not known and prompt.guard:stray(code) or disarmed
      end
    end
    local armed_now = prompt.guard:tick()
    if prompt.deadline or armed_now or disarmed then
      local second = math.floor(uv.now() / 1000)
      if armed_now or disarmed or second ~= last_second then
        last_second = second
        render(prompt)
        pcall(vim.cmd, 'redraw')
      end
    end
    return false
  end, 20)
  close(prompt)
  prompt.guard:release() -- what was typed before the prompt was armed goes where it was meant
  if prompt.withdrawn or not prompt.choice then
    return nil
  end
  return prompt.actions[prompt.choice]
end

local function text(value)
  return type(value) == 'string' and value or ''
end

--- `pi/requestApproval` handler: `{action = id}` or vim.NIL (denied).
function M.request_approval(_, params, _)
  if type(params) ~= 'table' or type(params.actions) ~= 'table' or #params.actions == 0 then
    return vim.NIL
  end
  local timeout = tonumber(params.timeoutMs) or require('pi_lsp.config').get().approval_timeout_ms
  local prompt = {
    id = params.approvalId,
    title = text(params.title) ~= '' and params.title or 'pi-lsp asks for approval',
    message = text(params.message),
    actions = params.actions,
    deadline = uv.now() + timeout,
  }
  if params.defaultAction and params.defaultAction ~= vim.NIL then
    for i, action in ipairs(params.actions) do
      if action.id == params.defaultAction then
        prompt.selected = i
      end
    end
  end
  -- the transcript shows the question and its outcome from the server's approval_* pi/events
  -- longer than the server waits: its withdrawal closes the prompt; this limit only matters
  -- when the server is gone
  local action = ask(prompt, timeout + 5000)
  if prompt.withdrawn then
    return vim.NIL -- the server decided already; this answer is ignored there
  end
  return action and { action = action.id } or { action = 'deny' }
end

--- `pi/approvalWithdrawn` handler: close the prompt of that id and say why in the transcript.
function M.approval_withdrawn(_, params, _)
  if type(params) ~= 'table' then
    return
  end
  local prompt = M.current
  if prompt and prompt.id == params.approvalId then
    prompt.withdrawn = params
    close(prompt)
  end
end

--- The server exited: nobody waits for the open prompt any more; close it.
function M.server_gone()
  local prompt = M.current
  if prompt and prompt.id then
    prompt.withdrawn = { approvalId = prompt.id, reason = 'the server exited', decision = 'deny' }
    close(prompt)
  end
end

--- A yes/no question of the plugin's own (e.g. `T` in :PiChanges) in the same guarded prompt:
--- `title`, `message` (strings), `yes` (the title of the action that goes ahead). Keys: `1`/`y`
--- go ahead, `2`/`n`, `<Esc>`, `q` cancel; nothing is preselected. Waits up to
--- `approval_timeout_ms`; returns true only when the user chose to go ahead.
function M.confirm(title, message, yes)
  local prompt = {
    title = title,
    message = message,
    actions = { { id = 'yes', title = yes }, { id = 'no', title = 'Cancel' } },
    words = { y = 'yes', n = 'no' },
    hint = 'y/n choose · <Esc>/q cancel',
    own = true,
  }
  local action = ask(prompt, require('pi_lsp.config').get().approval_timeout_ms)
  return action ~= nil and action.id == 'yes'
end

--- `window/showMessageRequest`: the same prompt with the request's actions (no default);
--- returns the chosen `MessageActionItem` or vim.NIL.
function M.show_message_request(_, params, _)
  if type(params) ~= 'table' then
    return vim.NIL
  end
  local actions = type(params.actions) == 'table' and params.actions or {}
  if #actions == 0 then
    vim.notify('pi-lsp: ' .. text(params.message), vim.log.levels.WARN)
    return vim.NIL
  end
  local message = text(params.message)
  local prompt = {
    title = 'pi-lsp: ' .. (vim.split(message, '\n', { plain = true })[1] or ''),
    message = message,
    actions = actions,
  }
  local action = ask(prompt, require('pi_lsp.config').get().approval_timeout_ms)
  return action or vim.NIL
end

return M
