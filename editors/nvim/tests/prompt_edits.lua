-- :Pi against `pi-lsp replay` (tests/editors/sessions/nvim_edits.jsonl): an open clean buffer
-- edited twice and saved, a closed file loaded, edited and saved, a dirty buffer edited and left
-- unsaved with the user's text, a bash call approved through a stubbed vim.ui.select; one :undo
-- reverts one agent edit; the transcript shows the tool calls; :checkhealth pi_lsp is OK.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    prompt_guard_ms = 50, -- the type-ahead guard, small: the scripted user waits for it
    settings = {
      baseUrl = vim.env.PI_TEST_URL,
      model = 'replay',
      apiKeyEnv = 'PI_TEST_KEY',
      maxRetries = 0,
      edit = { verifyTimeoutSeconds = 5, applyTimeoutSeconds = 10 },
      approvals = { timeoutSeconds = 10 },
    },
  })

  local asked = H.approver(function() return 'o' end) -- o: Allow once

  vim.cmd('edit dirty.txt')
  local dirty = api.nvim_get_current_buf()
  api.nvim_buf_set_lines(dirty, -1, -1, false, { 'user line' })
  vim.cmd('edit greet.py')
  local greet = api.nvim_get_current_buf()
  local t0 = H.uv.hrtime()
  H.check('client started and initialized', H.client() ~= nil)
  H.note('startup_ms', (H.uv.hrtime() - t0) / 1e6)
  H.check('both buffers attached', #H.clients(greet) == 1 and #H.clients(dirty) == 1)

  vim.cmd('Pi fix greet, the notes and the list')
  t0 = H.uv.hrtime()
  H.check('the run ended', H.wait_run(30000))
  H.note('run_ms', (H.uv.hrtime() - t0) / 1e6)
  local run = require('pi_lsp.run')
  H.check('stopReason stop', type(run.last_reply) == 'table' and run.last_reply.stopReason == 'stop', run.last_reply)

  local greet_expected = 'def greet():\n    return "héllo 👋"\n\n\ndef bye():\n    return "ciao"\n'
  H.check('open buffer edited (UTF-16 positions after a non-BMP char)', H.text(greet) == greet_expected, H.text(greet))
  H.check('open buffer saved through pi/saveDocuments', H.read('greet.py') == greet_expected, H.read('greet.py'))
  H.check('open buffer not modified after the save', not vim.bo[greet].modified)

  local closed = H.buf('closed.txt')
  H.check('closed file saved on disk', H.read('closed.txt') == 'first\nSECOND\n', H.read('closed.txt'))
  H.check('closed file loaded into an unmodified buffer', closed and not vim.bo[closed].modified, closed)

  H.check('dirty buffer keeps the user text and gets the agent edit',
    H.text(dirty) == 'ALPHA\nbeta\nuser line\n', H.text(dirty))
  H.check('dirty buffer stays modified', vim.bo[dirty].modified)
  H.check('dirty file unchanged on disk', H.read('dirty.txt') == 'alpha\nbeta\n', H.read('dirty.txt'))

  H.check('approval asked once, in the prompt window', #asked == 1, asked)
  local shown = asked[1] and table.concat(asked[1].lines, '\n') or ''
  H.check('the prompt shows the command and the three actions without a preselected one',
    shown:find('Run bash: touch approved.txt', 1, true) and shown:find('[1] Allow once', 1, true)
      and shown:find('[2] Allow for this session', 1, true) and shown:find('[3] Deny', 1, true)
      and not shown:find('›', 1, true), shown)
  H.check('approved bash ran', H.uv.fs_stat('approved.txt') ~= nil)

  H.check('transcript: prompt as a quote', H.transcript_has('> fix greet, the notes and the list'))
  H.check('transcript: assistant text', H.transcript_has('Editing greet.py.'))
  H.check('transcript: one readable line per edit', H.transcript_row('✓ edit greet.py') and H.transcript_row('✓ edit closed.txt'))
  H.check('transcript: the edit as a diff', H.transcript_has('  -    return "hi"') and H.transcript_has('  +    return "héllo 👋"'))
  local added = H.transcript_row('  +    return "héllo 👋"')
  H.check('transcript: added lines highlighted as a diff', added and vim.tbl_contains(H.transcript_groups(added), 'PiLspDiffAdd'),
    added and H.transcript_groups(added))
  H.check('transcript: the edit result', H.transcript_has('  │ Successfully replaced 1 block(s) in greet.py.'))
  H.check('transcript: the bash call and its approval', H.transcript_row('✓ bash touch approved.txt · allowed once'))
  H.check('transcript: save', H.transcript_has('saved greet.py'))
  H.check('transcript: end', H.transcript_has('— done —'))

  local listed = nil
  require('pi_lsp').tools(nil, function(lines) listed = lines end)
  H.wait(5000, function() return listed ~= nil end)
  H.check(':PiTools lists active and inactive tools', listed and vim.tbl_contains(listed, '* read')
    and vim.tbl_contains(listed, '  grep'), listed)
  local set = nil
  require('pi_lsp').tools({ 'read', 'grep' }, function(lines) set = lines end)
  H.wait(5000, function() return set ~= nil end)
  H.check(':PiTools read grep sets the active tools', set and set[1] == 'pi-lsp active tools: read grep', set)

  -- one :undo reverts one agent edit
  api.nvim_set_current_buf(greet)
  vim.cmd('silent undo')
  H.check('one :undo reverts the second edit only',
    H.text(greet) == 'def greet():\n    return "héllo 👋"\n\n\ndef bye():\n    return "bye"\n', H.text(greet))
  vim.cmd('silent undo')
  H.check('a second :undo reverts the first edit',
    H.text(greet) == 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "bye"\n', H.text(greet))
  api.nvim_set_current_buf(dirty)
  vim.cmd('silent undo')
  H.check(':undo in the dirty buffer reverts the agent edit, not the user text',
    H.text(dirty) == 'alpha\nbeta\nuser line\n', H.text(dirty))

  vim.cmd('PiLog')
  local log = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('close')
  H.check(":PiLog shows pi-lsp's own log", log:find('[INFO] pi_lsp.daemon.handlers.lifecycle: initialized for Neovim', 1, true), log)
  local lsp_log = H.read(vim.lsp.get_log_path()) or ''
  H.note('lsp_log', lsp_log)
  H.check(':LspLog has no errors (the daemon writes nothing to stderr)', not lsp_log:find('ERROR', 1, true), lsp_log)

  local health = H.health('pi_lsp')
  H.note('health', health)
  H.check(':checkhealth pi_lsp finds the server', health:find('OK: server `[^`]*pi%-lsp` found: pi%-lsp %d') ~= nil, health)
  H.check(':checkhealth pi_lsp sees the API key variable', health:find('OK: API key variable PI_TEST_KEY is set', 1, true) ~= nil, health)
  H.check(':checkhealth pi_lsp shows the server\'s bash sandbox (pi/health)', health:find('OK: bash sandbox: ', 1, true) ~= nil, health)
  H.check(':checkhealth pi_lsp has no error or warning', not health:find('ERROR') and not health:find('WARNING'), health)
  if vim.fn.has('nvim-0.11') == 1 then
    local deprecated = H.health('vim.deprecated')
    H.note('deprecated', deprecated)
    H.check(':checkhealth vim.deprecated is clean', deprecated:find('OK: No deprecated functions detected', 1, true)
      and not deprecated:find('WARNING'), deprecated)
  end
end)
