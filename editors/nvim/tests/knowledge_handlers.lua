-- Issue 17, the plugin's side on its own: pi/languageRequest and pi/diagnostics answered by asking
-- the user's real pylsp ($PI_TEST_PYLSP, started on FileType python as a user's config would), and
-- pi/diagnosticsChanged sent from DiagnosticChanged. The handlers are called the way Neovim calls
-- them on this version (H.call_handler); tests/editors/test_nvim_knowledge.py sets up the files.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

local function uri(name)
  return vim.uri_from_fname(vim.fn.getcwd() .. '/' .. name)
end

H.run(function()
  require('pi_lsp').setup({ settings = { maxRetries = 0 }, attach_timeout_ms = 15000, language_server_timeout_ms = 15000 })
  local pylsp = H.autostart('pylsp', { vim.env.PI_TEST_PYLSP }, 'python')
  local lr = require('pi_lsp.language_requests')
  local diag = require('pi_lsp.diagnostics')

  -- capabilities advertised to pi-lsp
  local caps = require('pi_lsp.client').capabilities().experimental.pi
  H.check('advertises pi.diagnostics', caps.diagnostics == true, caps)
  H.check('advertises the five language requests', vim.deep_equal(caps.languageRequests, lr.METHODS) and #caps.languageRequests == 5, caps)

  vim.cmd('edit notes.txt')
  local pi = H.client()
  H.check('pi-lsp started', pi ~= nil)
  local ctx = { client_id = pi.id }
  local pi_enc = pi.offset_encoding

  -- definition across two files, asked before any Python file is open: main.py is loaded hidden,
  -- its FileType starts pylsp, the plugin waits for pylsp to initialize; `helper` is in lib.py
  H.check('pylsp is not running yet', pylsp() == nil)
  local reply = H.call_handler(lr.handle, { method = 'textDocument/definition', params = {
    textDocument = { uri = uri('main.py') }, position = { line = 2, character = 6 } } }, ctx)
  local result = reply.result and reply.result.result
  H.note('encodings', { pi = pi_enc, pylsp = pylsp() and pylsp().offset_encoding })
  vim.cmd('edit main.py')
  local main = api.nvim_get_current_buf()
  H.check('definition: servers = {pylsp}', reply.result and vim.deep_equal(reply.result.servers, { 'pylsp' }), reply)
  H.check('definition: lib.py line 1', type(result) == 'table' and #result == 1 and result[1].uri == uri('lib.py')
    and result[1].range.start.line == 0 and result[1].range.start.character == 4, reply)

  -- references from lib.py, which is not loaded: loaded hidden, pylsp attaches, three files answer
  H.check('lib.py is not loaded yet', require('pi_lsp.documents').find_buf(uri('lib.py')) == nil)
  reply = H.call_handler(lr.handle, { method = 'textDocument/references', params = {
    textDocument = { uri = uri('lib.py') }, position = { line = 0, character = 5 }, context = { includeDeclaration = true } } }, ctx)
  result = reply.result and reply.result.result or {}
  local files = {}
  for _, loc in ipairs(result) do
    files[vim.fn.fnamemodify(vim.uri_to_fname(loc.uri), ':t')] = (files[vim.fn.fnamemodify(vim.uri_to_fname(loc.uri), ':t')] or 0) + 1
  end
  H.check('references: lib.py, main.py (twice) and util.py', files['lib.py'] == 1 and files['main.py'] == 3 and files['util.py'] == 2, { files = files, reply = reply })
  local lib = require('pi_lsp.documents').find_buf(uri('lib.py'))
  H.check('lib.py loaded hidden: not shown, not listed, not modified, python',
    lib and vim.fn.bufwinid(lib) == -1 and not vim.bo[lib].buflisted and not vim.bo[lib].modified and vim.bo[lib].filetype == 'python',
    lib and { win = vim.fn.bufwinid(lib), listed = vim.bo[lib].buflisted, ft = vim.bo[lib].filetype })
  H.check('pylsp attached to lib.py', lib and #H.clients(lib) == 2, lib and #H.clients(lib))

  -- positions converted between pi-lsp's encoding and pylsp's (UTF-16): `helper` after "éü" on line 4
  -- (pylsp counts code points as UTF-16 units, so the test keeps to the BMP; astral characters are
  -- checked on the conversion itself below)
  local col = ({ ['utf-8'] = 16, ['utf-16'] = 14, ['utf-32'] = 14 })[pi_enc]
  local found = false
  for _, loc in ipairs(result) do
    if loc.uri == uri('main.py') and loc.range.start.line == 3 then
      found = loc.range.start.character == col and loc.range['end'].character == col + 6
    end
  end
  H.check('references: the column after "éü" in pi-lsp\'s encoding', found, { col = col, result = result })
  reply = H.call_handler(lr.handle, { method = 'textDocument/definition', params = {
    textDocument = { uri = uri('main.py') }, position = { line = 3, character = col + 2 } } }, ctx)
  result = reply.result and reply.result.result
  H.check('definition from a column after "éü" (converted for pylsp)', type(result) == 'table' and #result == 1 and result[1].uri == uri('lib.py'), reply)

  -- hover, documentSymbol, rename
  reply = H.call_handler(lr.handle, { method = 'textDocument/hover', params = {
    textDocument = { uri = uri('main.py') }, position = { line = 2, character = 7 } } }, ctx)
  local hover = reply.result and reply.result.result
  H.check('hover: the signature', type(hover) == 'table' and vim.inspect(hover.contents):find('helper', 1, true) ~= nil, reply)
  reply = H.call_handler(lr.handle, { method = 'textDocument/documentSymbol', params = { textDocument = { uri = uri('lib.py') } } }, ctx)
  result = reply.result and reply.result.result or {}
  H.check('documentSymbol: helper', #result >= 1 and result[1].name == 'helper', reply)
  reply = H.call_handler(lr.handle, { method = 'textDocument/rename', params = {
    textDocument = { uri = uri('lib.py') }, position = { line = 0, character = 4 }, newName = 'assist' } }, ctx)
  local edit = reply.result and reply.result.result or {}
  local touched = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    table.insert(touched, vim.fn.fnamemodify(vim.uri_to_fname(change.textDocument.uri), ':t'))
  end
  for u in pairs(edit.changes or {}) do
    table.insert(touched, vim.fn.fnamemodify(vim.uri_to_fname(u), ':t'))
  end
  table.sort(touched)
  H.check('rename: a WorkspaceEdit over the three files', vim.deep_equal(touched, { 'lib.py', 'main.py', 'util.py' }), reply)
  H.check('rename: nothing applied by the plugin itself', H.text(main):find('helper', 1, true) ~= nil)

  -- a file no language server handles (loaded, and one that is not), bad input
  vim.cmd('edit notes.txt')
  reply = H.call_handler(lr.handle, { method = 'textDocument/definition', params = {
    textDocument = { uri = uri('notes.txt') }, position = { line = 0, character = 0 } } }, ctx)
  H.check('no language server: servers = {} and result null', reply.result and vim.deep_equal(reply.result.servers, {})
    and reply.result.result == vim.NIL, reply)
  reply = H.call_handler(lr.handle, { method = 'textDocument/definition', params = {
    textDocument = { uri = uri('readme.md') }, position = { line = 0, character = 0 } } }, ctx, 10000)
  H.check('a closed markdown file no server handles: servers = {} after the short grace, not attach_timeout_ms (15 s)',
    reply.result and vim.deep_equal(reply.result.servers, {}), reply)
  reply = H.call_handler(lr.handle, { method = 'textDocument/definition', params = {
    textDocument = { uri = uri('missing.py') }, position = { line = 0, character = 0 } } }, ctx)
  H.check('a missing file: InvalidParams naming it', reply.err and reply.err.code == -32602 and reply.err.message:find('missing.py', 1, true), reply)
  reply = H.call_handler(lr.handle, { method = 'textDocument/formatting', params = { textDocument = { uri = uri('main.py') } } }, ctx)
  H.check('an unsupported method: InvalidParams', reply.err and reply.err.code == -32602, reply)

  -- a server that does not answer in time: cancelled, RequestFailed "pylsp: ..."
  require('pi_lsp.config').get().language_server_timeout_ms = 300
  local pid = nil
  for _, child in ipairs(api.nvim_get_proc_children(vim.fn.getpid())) do
    local proc = api.nvim_get_proc(child)
    if proc and proc.name and proc.name:find('pylsp', 1, true) then
      pid = child
    end
  end
  H.check('found the pylsp process', pid ~= nil, api.nvim_get_proc_children(vim.fn.getpid()))
  H.uv.kill(pid, 'sigstop')
  reply = H.call_handler(lr.handle, { method = 'textDocument/definition', params = {
    textDocument = { uri = uri('main.py') }, position = { line = 2, character = 6 } } }, ctx)
  H.uv.kill(pid, 'sigcont')
  require('pi_lsp.config').get().language_server_timeout_ms = 15000
  H.check('a frozen server: RequestFailed "pylsp: did not answer within 300 ms"', reply.err and reply.err.code == -32803
    and reply.err.message == 'pylsp: did not answer within 300 ms', reply)

  -- diagnostics: an undefined name on main.py line 2, in the unsaved buffer (pylsp), and a linter's
  -- warning after "éü" (byte columns in Neovim, pi-lsp's encoding on the wire)
  local changed, dated = {}, {}
  local notify = require('pi_lsp.client').notify
  require('pi_lsp.client').notify = function(client, method, params)
    if method == 'pi/diagnosticsChanged' then
      table.insert(changed, params.uris)
      table.insert(dated, params.versions or {})
    end
    return notify(client, method, params)
  end
  api.nvim_buf_set_lines(main, 1, 1, false, { 'z = nope' })
  local function pyflakes_error()
    for _, d in ipairs(vim.diagnostic.get(main)) do
      if d.message:find('nope', 1, true) then
        return true
      end
    end
    return false
  end
  H.check('pylsp reported the undefined name', H.wait(20000, pyflakes_error), vim.diagnostic.get(main))
  local linter = api.nvim_create_namespace('a_linter')
  vim.diagnostic.set(linter, main, { { lnum = 4, col = 16, end_lnum = 4, end_col = 22, severity = 2,
    message = 'helper called with a constant', source = 'linter', code = 'W1' } })
  local e = require('pi_lsp.encoding')
  H.check('encoding: after an astral character', e.convert('a😀b', 3, 'utf-16', 'utf-8') == 5
    and e.convert('a😀b', 5, 'utf-8', 'utf-32') == 2 and e.convert('a😀b', 2, 'utf-32', 'utf-16') == 3)
  H.check('encoding: inside a character resolves to its start, past the end keeps the excess',
    e.convert('a😀b', 2, 'utf-16', 'utf-8') == 1 and e.convert('a😀b', 3, 'utf-8', 'utf-16') == 1
    and e.convert('aé', 5, 'utf-16', 'utf-8') == 6 and e.convert('aé', 6, 'utf-8', 'utf-32') == 5)
  H.check('pi/diagnosticsChanged named main.py', H.wait(2000, function()
    for _, uris in ipairs(changed) do
      if vim.tbl_contains(uris, uri('main.py')) then
        return true
      end
    end
    return false
  end), changed)
  -- pi-lsp's own diagnostics count neither in pi/diagnostics nor (0.10+, where Neovim says whose they are) as a change
  local pi_ns = vim.lsp.diagnostic.get_namespace(pi.id)
  H.wait(200, function() return false end)
  changed = {}
  vim.diagnostic.set(pi_ns, main, { { lnum = 0, col = 0, message = 'from pi-lsp itself', severity = 1 } })
  H.wait(200, function() return false end)
  if vim.fn.has('nvim-0.10') == 1 then
    H.check('a change in pi-lsp\'s own namespace is not sent', #changed == 0, changed)
  end
  reply = H.call_handler(diag.handle, { uris = { uri('main.py'), uri('util.py') } }, ctx)
  local docs = reply.result and reply.result.documents or {}
  local main_doc, util_doc = docs[1] or {}, docs[2] or {}
  local nope, lint = nil, nil
  for _, d in ipairs(main_doc.diagnostics or {}) do
    if d.message:find('nope', 1, true) then
      nope = d
    elseif d.source == 'linter' then
      lint = d
    end
    H.check('not pi-lsp\'s own diagnostic: ' .. d.message, d.message ~= 'from pi-lsp itself')
  end
  H.check('pi/diagnostics: main.py with servers {pylsp} and its version', main_doc.uri == uri('main.py')
    and vim.deep_equal(main_doc.servers, { 'pylsp' }) and main_doc.version == require('pi_lsp.versions').get(main), main_doc)
  H.check('pi/diagnostics: the pyflakes error', nope and nope.severity == 1 and nope.source == 'pyflakes'
    and nope.range.start.line == 1 and nope.range.start.character == 4, nope)
  H.check('pi/diagnostics: the linter warning, range in pi-lsp\'s encoding', lint and lint.severity == 2
    and lint.code == 'W1' and lint.range.start.line == 4 and lint.range.start.character == col
    and lint.range['end'].character == col + 6, { col = col, lint = lint })
  H.check('pi/diagnostics: util.py loaded and checked', util_doc.uri == uri('util.py') and vim.deep_equal(util_doc.servers, { 'pylsp' }), util_doc)
  reply = H.call_handler(diag.handle, vim.empty_dict(), ctx)
  local listed = {}
  for _, d in ipairs(reply.result and reply.result.documents or {}) do
    table.insert(listed, vim.fn.fnamemodify(vim.uri_to_fname(d.uri), ':t'))
  end
  table.sort(listed)
  H.check('pi/diagnostics without uris: the workspace documents with a server or diagnostics',
    vim.deep_equal(listed, { 'lib.py', 'main.py', 'util.py' }), listed)

  -- pi/diagnosticsChanged dates each change for pi-lsp's wait after an edit: a publish with the
  -- version it was computed for (here one for the text before the last change, arriving late), a
  -- change no publish explains (a linter) with the version last sent to pi-lsp
  local now = require('pi_lsp.versions').get(main)
  local function dated_with(version)
    return function()
      for _, versions in ipairs(dated) do
        if versions[uri('main.py')] == version then
          return true
        end
      end
      return false
    end
  end
  H.check('pylsp\'s publishes go through the dating handler', vim.lsp.handlers['textDocument/publishDiagnostics'] == diag._dating_handler)
  H.check('pylsp\'s report of the current text is dated with its version', H.wait(2000, dated_with(now)), { now = now, dated = dated })
  changed, dated = {}, {}
  local published = { { range = { start = { line = 1, character = 4 }, ['end'] = { line = 1, character = 8 } },
    severity = 1, message = "undefined name 'nope'", source = 'pyflakes' } }
  vim.lsp.handlers['textDocument/publishDiagnostics'](nil, { uri = uri('main.py'), version = now - 1, diagnostics = published },
    { client_id = pylsp().id, method = 'textDocument/publishDiagnostics', bufnr = main }, {})
  H.check('a stale publish is dated with its own, older version', H.wait(2000, dated_with(now - 1)), { now = now, dated = dated })
  changed, dated = {}, {}
  vim.diagnostic.set(linter, main, {})
  H.check('a linter\'s change is dated with the version sent to pi-lsp', H.wait(2000, dated_with(now)), { now = now, dated = dated })

  if vim.fn.has('nvim-0.11') == 1 then
    local deprecated = H.health('vim.deprecated')
    H.check(':checkhealth vim.deprecated is clean', deprecated:find('OK: No deprecated functions detected', 1, true)
      and not deprecated:find('WARNING'), deprecated)
  end
end)
