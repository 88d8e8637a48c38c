--- pi_lsp.documents: the editor side of pi-lsp's edit path (design.md sections 4 and 5).
---
--- * `workspace/applyEdit`: each agent edit is ONE undo step (the undo sequence is closed before
---   and after it), and a versioned edit whose version is not the buffer's current version is
---   refused with `applied: false` (stock Neovim skips it silently but answers `applied: true`,
---   real-clients.md pitfall 6).
--- * `pi/saveDocuments {documents: [{uri, version}]}` -> `{saved: [uri], skipped: [{uri, reason}]}`:
---   writes a loaded buffer only when `version` is null or still the buffer's version, with
---   `noautocmd` (no formatters, no BufWrite* hooks) keeping the file's 'eol' and 'bomb' as read
---   ('fixendofline' is off for that write), then sends `textDocument/didSave`.
--- * `pi/reloadDocuments {uris}` -> `{reloaded: [uri], skipped: [{uri, reason}]}`: reloads only
---   unmodified buffers (`:checktime` with 'autoread' on for that buffer; on a modified buffer it
---   would prompt and block, so those are skipped).
--- * `pi/documentState {uri, version, dirty}` when 'modified' changes (BufModifiedSet, OptionSet),
---   sent after the change's didChange.
---
--- Handlers follow Neovim's signature `(err, params, ctx)` and return the response table.
local client_mod = require('pi_lsp.client')

local M = {}

local api = vim.api

--- A loaded buffer whose file is `uri`, or nil (never creates a buffer).
function M.find_buf(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  fname = vim.fn.fnamemodify(fname, ':p')
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.fn.fnamemodify(api.nvim_buf_get_name(b), ':p') == fname then
      return b
    end
  end
  return nil
end

local function null(value)
  return value == nil or value == vim.NIL
end

--- Close the undo sequence of `bufnr`, so the next change starts a new undo step (setting
--- 'undolevels' to its own value does that; :help undo-blocks).
local function close_undo_step(bufnr)
  api.nvim_buf_call(bufnr, function()
    vim.cmd('let &l:undolevels = &l:undolevels')
  end)
end

--- The buffers a WorkspaceEdit targets that are loaded now, and the problem with a stale
--- versioned edit (or nil).
local function targets(edit)
  local bufs, problem = {}, nil
  local function visit(uri, version)
    local b = M.find_buf(uri)
    if not b then
      return
    end
    table.insert(bufs, b)
    if not null(version) and type(version) == 'number' then
      local current = client_mod.buf_version(b)
      if version ~= current and not problem then
        problem = string.format(
          'the buffer of %s changed meanwhile (version %d, the edit is for version %d)',
          vim.uri_to_fname(uri), current, version
        )
      end
    end
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      visit(change.textDocument.uri, change.textDocument.version)
    end
  end
  for uri in pairs(edit.changes or {}) do
    visit(uri, nil)
  end
  return bufs, problem
end

--- `workspace/applyEdit`: one undo step per edit, stale versions refused.
function M.apply_edit(_, params, ctx)
  if type(params) ~= 'table' or type(params.edit) ~= 'table' then
    return { applied = false, failureReason = 'pi_lsp: the request has no edit' }
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local bufs, problem = targets(params.edit)
  if problem then
    require('pi_lsp.transcript').note('edit refused: ' .. problem)
    return { applied = false, failureReason = problem }
  end
  for _, b in ipairs(bufs) do
    close_undo_step(b)
  end
  local encoding = client and client.offset_encoding or 'utf-16'
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, encoding)
  for _, b in ipairs(targets(params.edit)) do
    close_undo_step(b)
  end
  if not ok then
    require('pi_lsp.transcript').note('edit failed: ' .. tostring(err))
    return { applied = false, failureReason = tostring(err) }
  end
  return { applied = true }
end

--- Write `bufnr` to its file without autocommands, keeping 'eol', 'bomb' and 'fileformat'.
--- Raises the write error.
local function write_buffer(bufnr)
  api.nvim_buf_call(bufnr, function()
    local fixeol = vim.bo.fixendofline
    vim.bo.fixendofline = false
    local ok, err = pcall(vim.cmd, 'silent noautocmd keepalt keepjumps write!')
    vim.bo.fixendofline = fixeol
    if not ok then
      error(err, 0)
    end
  end)
end

--- The LSP clients attached to `bufnr` (public APIs: `get_clients` from 0.10, else 0.7's
--- `buf_get_clients`).
local function attached_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
end

--- Tell every server attached to `bufnr` that wants `didSave` that it was saved: noautocmd
--- skipped Neovim's own BufWritePost handler. Only public client APIs (the handler Neovim uses
--- is private); the text goes along when the server's `save.includeText` asks for it.
local function signal_saved(bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  for _, client in ipairs(attached_clients(bufnr)) do
    local sync = (client.server_capabilities or {}).textDocumentSync
    local save = type(sync) == 'table' and sync.save or nil
    if save then
      local params = { textDocument = { uri = uri } }
      if type(save) == 'table' and save.includeText then
        params.text = table.concat(api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. (vim.bo[bufnr].eol and '\n' or '')
      end
      client_mod.notify(client, 'textDocument/didSave', params)
    end
  end
end

--- `pi/saveDocuments`: see the module comment.
function M.save_documents(_, params, _)
  local transcript = require('pi_lsp.transcript')
  local saved, skipped = {}, {}
  local documents = type(params) == 'table' and params.documents or {}
  for _, doc in ipairs(type(documents) == 'table' and documents or {}) do
    local uri = type(doc) == 'table' and doc.uri or nil
    local b = type(uri) == 'string' and M.find_buf(uri) or nil
    local reason = nil
    if type(uri) ~= 'string' then
      reason = 'no uri'
    elseif not b then
      reason = 'the file is not loaded in Neovim'
    elseif not null(doc.version) and doc.version ~= client_mod.buf_version(b) then
      reason = string.format('the buffer changed since the edit (version %d, not %s)',
        client_mod.buf_version(b), tostring(doc.version))
    elseif vim.bo[b].readonly or not vim.bo[b].modifiable then
      reason = 'the buffer is read-only'
    else
      local ok, err = pcall(write_buffer, b)
      if ok then
        signal_saved(b)
        table.insert(saved, uri)
        transcript.note('saved ' .. vim.fn.fnamemodify(api.nvim_buf_get_name(b), ':~:.'))
      else
        reason = 'the write failed: ' .. tostring(err)
      end
    end
    if reason then
      table.insert(skipped, { uri = uri or vim.NIL, reason = reason })
      transcript.note('not saved ' .. tostring(uri) .. ': ' .. reason)
    end
  end
  return { saved = saved, skipped = skipped }
end

--- Reload the unmodified `bufnr` from disk (`:checktime` with 'autoread' on for it).
local function reload_buffer(bufnr)
  api.nvim_buf_call(bufnr, function()
    vim.cmd('setlocal autoread')
    local ok, err = pcall(vim.cmd, 'silent checktime ' .. bufnr)
    vim.cmd('setlocal autoread<')
    if not ok then
      error(err, 0)
    end
  end)
end

--- `pi/reloadDocuments`: see the module comment.
function M.reload_documents(_, params, _)
  local reloaded, skipped = {}, {}
  local uris = type(params) == 'table' and params.uris or {}
  for _, uri in ipairs(type(uris) == 'table' and uris or {}) do
    local b = type(uri) == 'string' and M.find_buf(uri) or nil
    local reason = nil
    if not b then
      reason = 'the file is not loaded in Neovim'
    elseif vim.bo[b].modified then
      reason = 'the buffer has unsaved changes'
    else
      local ok, err = pcall(reload_buffer, b)
      if ok then
        table.insert(reloaded, uri)
        require('pi_lsp.transcript').note('reloaded ' .. vim.fn.fnamemodify(api.nvim_buf_get_name(b), ':~:.'))
      else
        reason = 'the reload failed: ' .. tostring(err)
      end
    end
    if reason then
      table.insert(skipped, { uri = type(uri) == 'string' and uri or vim.NIL, reason = reason })
    end
  end
  return { reloaded = reloaded, skipped = skipped }
end

--- Send `pi/documentState` for `bufnr` to every pi-lsp client attached to it. Scheduled by the
--- BufModifiedSet/OptionSet autocommands, so the change's didChange (and its version) went out
--- first.
function M.send_state(bufnr)
  if not api.nvim_buf_is_valid(bufnr) or not api.nvim_buf_is_loaded(bufnr) then
    return
  end
  for _, id in pairs(client_mod.by_root) do
    local client = vim.lsp.get_client_by_id(id)
    if client and vim.lsp.buf_is_attached(bufnr, id) then
      client_mod.notify(client, 'pi/documentState', {
        uri = vim.uri_from_bufnr(bufnr),
        version = client_mod.buf_version(bufnr),
        dirty = vim.bo[bufnr].modified,
      })
    end
  end
end

return M
