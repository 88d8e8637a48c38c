--- pi_lsp.review: review an agent's edit before it lands (issue 18, `pi.edit.review = "before"`).
---
--- * `pi/reviewEdit {reviewId, toolName, path, hunks, timeoutMs}` -> `{decisions = [{hunk,
---   decision, reason?}]}`. The client advertises it (`experimental.pi.review`).
--- * `pi/reviewWithdrawn {reviewId, reason}`: the review closes at once (the server stopped waiting:
---   timeout or abort); nothing typed afterwards counts.
---
--- The review is a float showing each hunk as a diff (`-` old lines, `+` new lines, 1-based
--- `@@ -old +new @@` headers) with a mark per hunk: `?` undecided, `✓` accepted, `✗` rejected.
--- Keys act on the hunk under the cursor (the highlighted one): `a` accept, `r` reject, `R` reject
--- with a reason (typed on the float's last line, `<CR>` confirms, `<Esc>` cancels), `j`/`k` (or
--- `n`/`p`) move; `A` accept all, `X` reject all. The decisions go to the server once every hunk
--- has one (`<CR>` sends nothing while a hunk is undecided); `q`/`<Esc>` sends them with every
--- undecided hunk rejected.
---
--- Like the approval prompt (`pi_lsp.approvals`) it is modal: the handler waits in `vim.wait` and
--- reads keys with `getchar(0)`, since Neovim 0.7 needs the answer before the handler returns;
--- and it has the same type-ahead guard (`pi_lsp.typeahead`): keys typed before it is armed (until
--- no key came for `prompt_guard_ms`) decide nothing and are given back to Neovim, in order, when
--- it closes; a key that is none of the review's once armed (the `:` of `:PiAbort`) disarms it
--- the same way, so the `A` of that command accepts nothing.
local M = {}

local api = vim.api
local float = require('pi_lsp.float')
local typeahead = require('pi_lsp.typeahead')
local uv = vim.uv or vim.loop
local NS = api.nvim_create_namespace('pi_lsp_review')

--- The review on screen: `{id, buf, win, hunks, decisions, selected, reason, rows, withdrawn, done,
--- guard}` or nil (`guard`: its `pi_lsp.typeahead` guard; `guard.armed` once keys decide).
M.current = nil

local ESC, CTRL_C, CR = 27, 3, 13

local function close(review)
  if review.win and api.nvim_win_is_valid(review.win) then
    pcall(api.nvim_win_close, review.win, true)
  end
  if review.buf and api.nvim_buf_is_valid(review.buf) then
    pcall(api.nvim_buf_delete, review.buf, { force = true })
  end
  if M.current == review then
    M.current = nil
  end
  pcall(vim.cmd, 'redraw')
end

--- `start,count` of a unified-diff header from a 0-based start (a count of 0 names the line before).
local function range(start, count)
  if count == 1 then
    return tostring(start + 1)
  end
  return string.format('%d,%d', count == 0 and start or start + 1, count)
end

local function text_lines(text)
  local lines = vim.split(type(text) == 'string' and text or '', '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

local MARKS = { accept = '✓', reject = '✗' }

--- Draw the review; remembers the header row (0-based) of each hunk in `review.rows`.
local function render(review)
  local lines, groups = {}, {}
  local function add(line, group)
    table.insert(lines, line)
    groups[#lines] = group
  end
  local count = #review.hunks
  add(string.format(' pi-lsp review · %s %s · %d hunk%s', review.tool, review.path, count, count == 1 and '' or 's'), 'Title')
  add(' a accept · r reject · R reject with a reason · A accept all · X reject all · j/k move · q reject the rest', 'Comment')
  review.rows = {}
  for i, hunk in ipairs(review.hunks) do
    add('')
    local decision = review.decisions[hunk.id]
    local mark = decision and MARKS[decision.decision] or '?'
    local header = string.format(' %s hunk %d/%d @@ -%s +%s @@', mark, i, count,
      range(hunk.oldStart or 0, hunk.oldLines or 0), range(hunk.newStart or 0, hunk.newLines or 0))
    if decision and decision.reason then
      header = header .. '  rejected: ' .. decision.reason
    end
    add(header, i == review.selected and 'PmenuSel' or (decision and decision.decision == 'reject' and 'DiffDelete' or nil))
    review.rows[i] = #lines - 1
    for _, line in ipairs(text_lines(hunk.oldText)) do
      add('   -' .. line, 'DiffDelete')
    end
    for _, line in ipairs(text_lines(hunk.newText)) do
      add('   +' .. line, 'DiffAdd')
    end
  end
  add('')
  if review.reason then
    add(' Reason: ' .. review.reason .. '▏', 'Question')
  else
    local seconds = math.max(0, math.ceil((review.deadline - uv.now()) / 1000))
    local held = review.guard and review.guard:note()
    add(string.format(' %sundecided hunks are rejected in %d s', held and (held .. ' · ') or '', seconds), 'Comment')
  end
  vim.bo[review.buf].modifiable = true
  api.nvim_buf_set_lines(review.buf, 0, -1, false, lines)
  vim.bo[review.buf].modifiable = false
  api.nvim_buf_clear_namespace(review.buf, NS, 0, -1)
  for row, group in pairs(groups) do
    api.nvim_buf_add_highlight(review.buf, NS, group, row - 1, 0, -1)
  end
  if review.win and api.nvim_win_is_valid(review.win) then
    local row = review.rows[review.selected] or 0
    pcall(api.nvim_win_set_cursor, review.win, { row + 1, 0 })
  end
  return lines
end

local function open(review)
  review.buf = float.scratch('pi_review')
  review.win = float.open_centered(review.buf, render(review), 40)
  vim.wo[review.win].cursorline = false
  render(review)
  pcall(vim.cmd, 'redraw')
end

local function all_decided(review)
  for _, hunk in ipairs(review.hunks) do
    if not review.decisions[hunk.id] then
      return false
    end
  end
  return true
end

--- Decide the selected hunk; move to the next undecided one. True when the review is complete.
local function decide(review, decision, reason)
  local hunk = review.hunks[review.selected]
  if not hunk then
    return false
  end
  review.decisions[hunk.id] = { hunk = hunk.id, decision = decision, reason = reason }
  if all_decided(review) then
    return true
  end
  local n = #review.hunks
  for step = 1, n do
    local i = (review.selected - 1 + step) % n + 1
    if not review.decisions[review.hunks[i].id] then
      review.selected = i
      break
    end
  end
  return false
end

local function decide_all(review, decision)
  for _, hunk in ipairs(review.hunks) do
    review.decisions[hunk.id] = { hunk = hunk.id, decision = decision }
  end
  return true
end

local function key_of(code)
  if type(code) == 'number' then
    return vim.fn.nr2char(code)
  end
  return tostring(code)
end

local function is_backspace(code)
  return code == 8 or code == 127 or code == '\128kb'
end

--- The reason being typed after `R`; true when it was confirmed and the review is complete.
local function on_reason_key(review, code)
  if code == ESC or code == CTRL_C then
    review.reason = nil
  elseif code == CR then
    local reason = vim.trim(review.reason)
    review.reason = nil
    return decide(review, 'reject', reason ~= '' and reason or nil)
  elseif is_backspace(code) then
    review.reason = review.reason:sub(1, #review.reason - 1)
  elseif type(code) == 'number' and code >= 32 then
    review.reason = review.reason .. vim.fn.nr2char(code)
  end
  return false
end

--- One typed key; returns `done` (true when the review is complete or dismissed) and `known`
--- (false for a key that is none of the review's: the caller holds it, `Guard:stray`).
local function on_key(review, code)
  if review.reason then
    return on_reason_key(review, code), true
  end
  if code == CR then
    if all_decided(review) then
      return true, true
    end
    -- never a silent reject: a <CR> meant for the previous review (its last decision sent it)
    -- must not throw this one away; q/<Esc> reject the rest on purpose
    api.nvim_echo({ { 'pi: decide each hunk (a/r, A/X for all) or q to reject the rest', 'WarningMsg' } }, false, {})
    return false, true
  end
  if code == ESC or code == CTRL_C then
    return true, true
  end
  local key = key_of(code)
  if key == 'q' then
    return true, true
  elseif key == 'a' then
    return decide(review, 'accept'), true
  elseif key == 'r' then
    return decide(review, 'reject'), true
  elseif key == 'R' then
    review.reason = ''
  elseif key == 'A' then
    return decide_all(review, 'accept'), true
  elseif key == 'X' then
    return decide_all(review, 'reject'), true
  elseif key == 'j' or key == 'n' then
    review.selected = math.min(#review.hunks, review.selected + 1)
  elseif key == 'k' or key == 'p' then
    review.selected = math.max(1, review.selected - 1)
  else
    return false, false
  end
  return false, true
end

--- Show `review` and wait for the decisions (or the withdrawal, or `limit_ms`).
local function run(review, limit_ms)
  if M.current then
    -- one review at a time (a second edit arrives while one is open: tool calls run in parallel):
    -- the older one is sent as it stands, its undecided hunks rejected
    M.current.done = true
    close(M.current)
  end
  M.current = review
  review.guard = typeahead.new()
  open(review)
  local last_second = -1
  vim.wait(limit_ms, function()
    if review.withdrawn or review.done then
      return true
    end
    local typed = false
    while true do
      local ok, code = pcall(vim.fn.getchar, 0)
      if not ok or code == 0 or code == '' then
        break
      end
      if not review.guard:hold(code) then
        typed = true
        local done, known = on_key(review, code)
        if done then
          review.done = true
          return true
        end
        if not known then
          -- typing something else over the armed review (`:PiAbort`): its `A` accepts nothing
          review.guard:stray(code)
        end
      end
    end
    typed = review.guard:tick() or typed
    local second = math.floor(uv.now() / 1000)
    if typed or second ~= last_second then
      last_second = second
      render(review)
      pcall(vim.cmd, 'redraw')
    end
    return false
  end, 20)
  close(review)
  review.guard:release() -- what was typed before the review was armed goes where it was meant
end

--- `pi/reviewEdit` handler: the decisions, undecided hunks rejected; vim.NIL once withdrawn.
function M.review_edit(_, params, _)
  if type(params) ~= 'table' or type(params.hunks) ~= 'table' or #params.hunks == 0 then
    return vim.NIL
  end
  local timeout = tonumber(params.timeoutMs) or 600000
  local path = type(params.path) == 'string' and vim.fn.fnamemodify(params.path, ':~:.') or '?'
  local review = {
    id = params.reviewId,
    tool = type(params.toolName) == 'string' and params.toolName or 'edit',
    path = path,
    hunks = params.hunks,
    decisions = {},
    selected = 1,
    deadline = uv.now() + timeout,
  }
  -- longer than the server waits: its withdrawal closes the review; this limit only matters
  -- when the server is gone
  run(review, timeout + 5000)
  if review.withdrawn then
    return vim.NIL
  end
  local decisions = {}
  for _, hunk in ipairs(review.hunks) do
    table.insert(decisions, review.decisions[hunk.id] or { hunk = hunk.id, decision = 'reject' })
  end
  return { decisions = decisions }
end

--- `pi/reviewWithdrawn` handler: close the review of that id.
function M.review_withdrawn(_, params, _)
  local review = M.current
  if type(params) == 'table' and review and review.id == params.reviewId then
    review.withdrawn = params
    close(review)
  end
end

--- The server exited: nobody waits for the open review any more; close it.
function M.server_gone()
  local review = M.current
  if review then
    review.withdrawn = { reviewId = review.id, reason = 'the server exited' }
    close(review)
  end
end

return M
