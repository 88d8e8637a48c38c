-- :Pi against `pi-lsp replay` (tests/editors/sessions/nvim_edits.jsonl): an open clean buffer
-- edited twice and saved, a closed file loaded, edited and saved, a dirty buffer edited and left
-- unsaved with the user's text, a bash call approved through a stubbed vim.ui.select; one :undo
-- reverts one agent edit; the transcript shows the tool calls; :checkhealth pi_lsp is OK.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    settings = {
      baseUrl = vim.env.PI_TEST_URL,
      model = 'replay',
      apiKeyEnv = 'PI_TEST_KEY',
      maxRetries = 0,
      edit = { verifyTimeoutSeconds = 5, applyTimeoutSeconds = 10 },
      approvals = { timeoutSeconds = 10 },
    },
  })

  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item(item))
    end
    table.insert(asked, { prompt = opts.prompt, titles = titles })
    for _, item in ipairs(items) do
      if item.title == 'Allow once' then
        return on_choice(item, 1)
      end
    end
    on_choice(nil, nil)
  end

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

  H.check('approval asked through vim.ui.select', #asked == 1, asked)
  H.check('approval offered Allow once', asked[1] and vim.tbl_contains(asked[1].titles, 'Allow once'), asked)
  H.check('approved bash ran', H.uv.fs_stat('approved.txt') ~= nil)

  H.check('transcript: prompt', H.transcript_has('> fix greet, the notes and the list'))
  H.check('transcript: assistant text', H.transcript_has('Editing greet.py.'))
  H.check('transcript: edit call with arguments', H.transcript_has('tool edit {') and H.transcript_has('"path":"closed.txt"'))
  H.check('transcript: edit result', H.transcript_has('  ok: Successfully replaced 1 block(s) in greet.py.'))
  H.check('transcript: bash call', H.transcript_has('tool bash {"command":"touch approved.txt"}'))
  H.check('transcript: approval', H.transcript_has('approval answered: Allow once'))
  H.check('transcript: save', H.transcript_has('saved greet.py'))
  H.check('transcript: end', H.transcript_has('-- done (stop) --'))

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
  H.check(":PiLog shows pi-lsp's own log", log:find('[INFO] pi_lsp.daemon.server: initialized for Neovim', 1, true), log)
  local lsp_log = H.read(vim.lsp.get_log_path()) or ''
  H.note('lsp_log', lsp_log)
  H.check(':LspLog has no errors (the daemon writes nothing to stderr)', not lsp_log:find('ERROR', 1, true), lsp_log)

  local health = H.health('pi_lsp')
  H.note('health', health)
  H.check(':checkhealth pi_lsp finds the server', health:find('OK: server `[^`]*pi%-lsp` found: pi%-lsp %d') ~= nil, health)
  H.check(':checkhealth pi_lsp sees the API key variable', health:find('OK: API key variable PI_TEST_KEY is set', 1, true) ~= nil, health)
  H.check(':checkhealth pi_lsp has no error or warning', not health:find('ERROR') and not health:find('WARNING'), health)
  if vim.fn.has('nvim-0.11') == 1 then
    local deprecated = H.health('vim.deprecated')
    H.note('deprecated', deprecated)
    H.check(':checkhealth vim.deprecated is clean', deprecated:find('OK: No deprecated functions detected', 1, true)
      and not deprecated:find('WARNING'), deprecated)
  end
end)
