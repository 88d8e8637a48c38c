-- :PiChanges against `pi-lsp replay` (tests/editors/sessions/nvim_changes.jsonl): one edit changes
-- two hunks of the open greet.py and a write creates notes.txt. The transcript links the review
-- (<CR> on its line opens :PiChanges); the review lists both files and the hunks as the user sees them; `k` keeps a hunk; `u` undoes one
-- hunk (the other stays); `:undo` in the file brings the agent's hunk back (applied again); `<CR>`
-- opens the file at a hunk; the user types inside the other hunk, then `U` undoes the first hunk
-- again and reports the typed one as a conflict, the user's text intact; `T` asks first (the
-- approval prompt: `q` cancels, nothing is undone), then `y` takes the rest of the session back (the
-- created file is deleted).
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard of T's question, small: the scripted user waits for it
    settings = {
      baseUrl = vim.env.PI_TEST_URL,
      model = 'replay',
      apiKeyEnv = 'PI_TEST_KEY',
      maxRetries = 0,
      edit = { verifyTimeoutSeconds = 5, applyTimeoutSeconds = 10 },
    },
  })
  local changes = require('pi_lsp.changes')
  local function settle()
    return H.wait(10000, function()
      return changes.idle() and changes.state.files ~= nil
    end)
  end
  local function row_of(text)
    for i, line in ipairs(changes.lines()) do
      if line == text then
        return i
      end
    end
    return nil
  end
  local function press(key, text)
    local row = row_of(text)
    H.check('row to press ' .. key .. ' on: ' .. text, row ~= nil, changes.lines())
    api.nvim_set_current_win(vim.fn.bufwinid(changes.buffer()))
    api.nvim_win_set_cursor(0, { row or 1, 0 })
    api.nvim_feedkeys(api.nvim_replace_termcodes(key, true, false, true), 'mx', false)
    return settle()
  end
  -- T asks in the approval prompt, which reads the user's keys while it waits; under feedkeys'
  -- `x` (:normal) Neovim answers every read with <Esc>, so T's own function is called, as its
  -- mapping calls it, with the cursor on `text`
  local function press_t(text)
    local row = row_of(text)
    H.check('row to press T on: ' .. text, row ~= nil, changes.lines())
    api.nvim_set_current_win(vim.fn.bufwinid(changes.buffer()))
    api.nvim_win_set_cursor(0, { row or 1, 0 })
    H.check('T is mapped in the changes buffer', vim.fn.maparg('T', 'n') ~= '')
    changes.undo_all()
    return settle()
  end

  vim.cmd('edit greet.py')
  local greet = api.nvim_get_current_buf()
  H.check('client started and initialized', H.client() ~= nil)

  vim.cmd('Pi tidy greet and add notes')
  H.check('the run ended', H.wait_run(30000))
  local original = 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "bye"\n'
  H.check('the agent changed two hunks', H.text(greet) == original:gsub('"hi"', '"hello"'):gsub('"bye"', '"ciao"'),
    H.text(greet))
  H.check('the transcript links the review', H.wait(5000, function()
    return H.transcript_has('2 files changed — :PiChanges')
  end))

  local t0 = H.uv.hrtime()
  local transcript = require('pi_lsp.transcript')
  api.nvim_set_current_win(vim.fn.bufwinid(transcript.buffer()))
  api.nvim_win_set_cursor(0, { H.transcript_row('2 files changed — :PiChanges'), 0 })
  api.nvim_feedkeys(api.nvim_replace_termcodes('<CR>', true, false, true), 'mx', false) -- :PiChanges
  H.check(':PiChanges answered', settle())
  H.note('changes_ms', (H.uv.hrtime() - t0) / 1e6)
  local lines = changes.lines()
  H.check('title names the session', (lines[1] or ''):match('^pi changes · session %S+ · all turns$') ~= nil, lines)
  H.check('the listing as the user sees it', vim.deep_equal({ unpack(lines, 2) }, {
    'k keep · u undo hunk · U undo file · P undo last prompt · T undo all listed · <CR> open · d diff · r refresh · q close',
    '',
    'greet.py  modified · 2 hunks',
    '  @@ -2,1 +2,1 @@ applied',
    '  -    return "hi"',
    '  +    return "hello"',
    '  @@ -6,1 +6,1 @@ applied',
    '  -    return "bye"',
    '  +    return "ciao"',
    'notes.txt  created',
  }), lines)
  local added = row_of('  +    return "hello"')
  local marks = added and api.nvim_buf_get_extmarks(changes.buffer(), api.nvim_create_namespace('pi_lsp_changes'),
    { added - 1, 0 }, { added - 1, -1 }, { details = true }) or {}
  H.check('added lines highlighted as a diff', marks[1] and marks[1][4].hl_group == 'PiLspDiffAdd', marks)

  -- d: the file in diff mode beside what undoing it would leave
  press('d', '  -    return "bye"')
  local undone = H.buf('pi://undone/greet.py') or vim.fn.bufnr('pi://undone/greet.py')
  local undone_win = vim.fn.bufwinid(undone)
  H.check('d shows the file with the hunks taken back, both windows in diff mode', undone_win ~= -1
    and H.text(undone) == original and vim.wo[undone_win].diff and vim.wo[vim.fn.bufwinid(greet)].diff,
    { undone, undone_win, undone ~= -1 and H.text(undone) })
  api.nvim_win_close(undone_win, true)
  H.check('closing it ends the diff', not vim.wo[vim.fn.bufwinid(greet)].diff)

  -- keep the second hunk, undo the first
  press('k', '  @@ -6,1 +6,1 @@ applied')
  H.check('k marks the hunk kept', row_of('  @@ -6,1 +6,1 @@ kept') ~= nil, changes.lines())
  press('u', '  @@ -2,1 +2,1 @@ applied')
  H.check('u reverts that hunk in the buffer, the other stays',
    H.text(greet) == original:gsub('"bye"', '"ciao"'), H.text(greet))
  H.check('u reports the result', row_of('reverted 1 hunk(s) · greet.py: reverted hunks') ~= nil, changes.lines())
  H.check('the hunk shows reverted', row_of('  @@ -2,1 +2,1 @@ reverted') ~= nil, changes.lines())

  -- the revert is one undo step in the file
  api.nvim_set_current_win(vim.fn.bufwinid(greet))
  vim.cmd('silent undo')
  H.check(':undo brings the agent hunk back', H.text(greet) == original:gsub('"hi"', '"hello"'):gsub('"bye"', '"ciao"'),
    H.text(greet))

  -- <CR> opens the file at the hunk
  press('<CR>', '  +    return "ciao"')
  H.check('<CR> opens the file at the hunk in the other window', api.nvim_get_current_buf() == greet
    and api.nvim_win_get_cursor(0)[1] == 6 and vim.fn.bufwinid(changes.buffer()) ~= -1,
    { api.nvim_buf_get_name(0), api.nvim_win_get_cursor(0) })

  -- the user types inside the kept hunk, then U: a conflict, never forced
  api.nvim_buf_set_lines(greet, 5, 6, false, { '    return "ciao, mine"' })
  local typed = H.text(greet)
  press('r', 'notes.txt  created')
  H.check('r shows the undone revert applied again and the typed hunk changed',
    row_of('  @@ -2,1 +2,1 @@ applied') ~= nil and row_of('  @@ -6,1 +6,1 @@ changed') ~= nil, changes.lines())
  press('U', 'greet.py  modified · now changed · 2 hunks')
  H.check('U reverts the applied hunk and reports the other as a conflict',
    row_of('reverted 1 hunk(s) · greet.py: reverted hunks') ~= nil
      and row_of('conflict: greet.py @@ 6: changed since the agent\'s edit; left as it is') ~= nil, changes.lines())
  H.check("U keeps the user's text", H.text(greet) == typed:gsub('"hello"', '"hi"'), H.text(greet))
  typed = H.text(greet)

  -- the server stops (crash, restart); the next :PiChanges starts it again with the journal
  local old_id = H.client().id
  t0 = H.uv.hrtime()
  vim.lsp.stop_client(old_id)
  H.check('the server stopped', H.wait(5000, function()
    return vim.lsp.get_client_by_id(old_id) == nil
  end))
  H.note('stop_ms', (H.uv.hrtime() - t0) / 1e6)
  t0 = H.uv.hrtime()
  vim.cmd('PiChanges')
  H.check('after a restart the review lists the journal, the typed hunk still changed', settle()
    and row_of('  @@ -6,1 +6,1 @@ changed') ~= nil and row_of('notes.txt  created') ~= nil, changes.lines())
  H.note('restart_ms', (H.uv.hrtime() - t0) / 1e6)
  H.check('the open buffer is attached to the new server', #H.clients(greet) == 1, H.clients(greet))

  -- T: asks first; q cancels and nothing changes
  local answers, n = { 'q', 'y' }, 0
  local asked = H.approver(function()
    n = n + 1
    return answers[n]
  end)
  press_t('notes.txt  created')
  local question = table.concat(asked[1] and asked[1].lines or {}, '\n')
  H.check('T asks before undoing', question:find('Undo everything listed?', 1, true)
    and question:find('every change of session ', 1, true) and question:find('[1] Undo everything listed', 1, true)
    and question:find('[2] Cancel', 1, true) and question:find('y/n choose', 1, true), question)
  H.check('nothing is preselected', not question:find('›', 1, true), question)
  H.check('the status line does not say the agent waits', asked[1] and asked[1].status == '', asked[1] and asked[1].status)
  H.check('q cancelled: notes.txt is still there', H.uv.fs_stat('notes.txt') ~= nil)
  H.check('and still listed as created', row_of('notes.txt  created') ~= nil, changes.lines())
  -- T under :normal (feedkeys 'x'): Neovim answers the prompt's reads with <Esc>: it cancels at once
  press('T', 'notes.txt  created')
  H.check('T under :normal cancelled: notes.txt is still there', H.uv.fs_stat('notes.txt') ~= nil)
  H.check('and no question is left open', require('pi_lsp.approvals').current == nil)
  -- T again, y: everything listed; the created file is deleted, the conflict reported again
  press_t('notes.txt  created')
  H.check('T asked again', #asked == 2, #asked)
  H.check('T deletes the created file', H.uv.fs_stat('notes.txt') == nil)
  H.check('T reports it', row_of('reverted 0 hunk(s) · notes.txt: deleted') ~= nil, changes.lines())
  H.check("T keeps the user's text", H.text(greet) == typed, H.text(greet))

  -- arguments: a turn, or the session `external` (pi/executeToolCall calls: none here)
  vim.cmd('PiChanges 1')
  settle()
  local one = changes.lines()
  H.check(':PiChanges 1 lists turn 1', one[1]:match(' · turn 1$') and vim.tbl_contains(one, 'notes.txt  created · now reverted'), one)
  vim.cmd('PiChanges external')
  settle()
  local external = changes.lines()
  H.check(':PiChanges external', external[1] == 'pi changes · external · all turns' and external[4] == 'no changes', external)

  -- a second prompt that changes nothing (the recording is used up: the model call fails): the
  -- transcript links no review for it, not the first prompt's files again
  pcall(vim.cmd, 'Pi anything else?')
  H.check('the second run ended', H.wait_run(30000))
  H.wait(1000, function() return false end) -- the link's two pi/changes requests would be answered by now
  local links = vim.tbl_filter(function(line) return line:find('changed — :PiChanges', 1, true) ~= nil end,
    require('pi_lsp.transcript').lines())
  H.check('the failed run got no "files changed" line', #links == 1, require('pi_lsp.transcript').lines())
end)
