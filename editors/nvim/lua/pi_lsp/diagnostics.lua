--- pi_lsp.diagnostics: the editor's diagnostics for pi-lsp (issue 17 wire contract).
---
--- * `pi/diagnostics {uris?}` -> `{documents: [{uri, version, servers, diagnostics}]}`: what
---   `vim.diagnostic.get` holds for each document from every source but pi-lsp itself (language
---   servers, linters), as LSP `Diagnostic`s: range in pi-lsp's encoding (Neovim keeps byte
---   columns), `severity` 1-4, `message`, `source?`, `code?`, `tags?`. A named document that is not
---   loaded is loaded hidden, and its language servers and their first diagnostics are waited for
---   (`attach_timeout_ms`), so a "before" snapshot does not miss problems that were already there.
---   Without `uris`: every loaded document under pi-lsp's workspace folders that has diagnostics or
---   a language server attached. `servers`: the names of the attached clients other than pi-lsp;
---   `version`: the document version last sent to pi-lsp, else null.
--- * `pi/diagnosticsChanged {uris, versions?}`: sent from the `DiagnosticChanged` autocommand to
---   the pi-lsp clients whose workspace holds the document, coalesced for `diagnostics_coalesce_ms`.
---   A change known to come only from pi-lsp's own namespaces (0.10+ passes the new diagnostics) is
---   not sent; a republish of the same set is (it tells pi-lsp the server looked at the new text).
---   `versions[uri]` dates the change for pi-lsp's wait after an edit: the `version` of the
---   language server's `textDocument/publishDiagnostics` being handled when it fired (Neovim numbers
---   a buffer's versions alike for all its clients), else the version last sent to pi-lsp (a
---   linter's `vim.diagnostic.set`, a server that sends none); the newest of coalesced changes. The
---   publish's version is read by wrapping `vim.lsp.handlers['textDocument/publishDiagnostics']`
---   (vim.diagnostic keeps none); a client with its own handler for it is dated the second way.
local async = require('pi_lsp.async')
local client_mod = require('pi_lsp.client')
local config = require('pi_lsp.config')
local enc = require('pi_lsp.encoding')
local servers = require('pi_lsp.language_servers')

local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

--- The diagnostic namespaces of pi-lsp's clients (and of client `pi_id`): Neovim names an LSP
--- client's namespaces `vim.lsp.<client name>.<client id>` (pull ones with a further suffix).
function M.pi_namespaces(pi_id)
  local ids = {}
  for _, id in pairs(client_mod.by_root) do
    ids[id] = true
  end
  if pi_id then
    ids[pi_id] = true
  end
  local out = {}
  for name, ns in pairs(api.nvim_get_namespaces()) do
    local id = name:match('^vim%.lsp%..-%.(%d+)$') or name:match('^vim%.lsp%..-%.(%d+)%.[^%.]*$')
    if id and ids[tonumber(id)] then
      out[ns] = true
    end
  end
  return out
end

--- One `vim.diagnostic` entry as an LSP Diagnostic, columns converted from bytes to `encoding`.
local function to_lsp(d, bufnr, encoding)
  local function line(row)
    return api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  end
  local end_lnum = d.end_lnum or d.lnum
  local end_col = d.end_col or d.col
  local lsp = type(d.user_data) == 'table' and type(d.user_data.lsp) == 'table' and d.user_data.lsp or {}
  local out = {
    range = {
      start = { line = d.lnum, character = enc.from_byte(line(d.lnum), d.col or 0, encoding) },
      ['end'] = { line = end_lnum, character = enc.from_byte(line(end_lnum), end_col or 0, encoding) },
    },
    severity = d.severity or 1,
    message = d.message or '',
  }
  if d.source ~= nil and d.source ~= vim.NIL then
    out.source = d.source
  end
  local code = d.code ~= nil and d.code or lsp.code
  if code ~= nil and code ~= vim.NIL then
    out.code = code
  end
  if type(lsp.tags) == 'table' and next(lsp.tags) then
    out.tags = lsp.tags
  end
  return out
end

--- The diagnostics of `bufnr` other than pi-lsp's, as a `pi/diagnostics` document.
function M.document(bufnr, pi_id, encoding, excluded)
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if not excluded[d.namespace] then
      table.insert(diagnostics, to_lsp(d, bufnr, encoding))
    end
  end
  return {
    uri = vim.uri_from_bufnr(bufnr),
    version = require('pi_lsp.versions').get(bufnr) or vim.NIL,
    servers = servers.names(servers.others(bufnr, pi_id)),
    diagnostics = diagnostics,
  }
end

--- The workspace folders of pi-lsp client `client` as absolute paths.
local function folders(client)
  local out = {}
  for _, f in ipairs((client and client.workspace_folders) or {}) do
    table.insert(out, vim.uri_to_fname(f.uri))
  end
  if #out == 0 and client and client.config and client.config.root_dir then
    table.insert(out, client.config.root_dir)
  end
  return out
end

local function under(path, roots)
  for _, root in ipairs(roots) do
    if path == root or path:sub(1, #root + 1) == root .. '/' then
      return true
    end
  end
  return false
end

--- The loaded documents under `client`'s workspace folders with diagnostics or a language server.
local function workspace_buffers(client, pi_id, excluded)
  local roots = folders(client)
  local out = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(b)
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and name ~= '' and under(name, roots) then
      local has = #servers.others(b, pi_id) > 0
      for _, d in ipairs(has and {} or vim.diagnostic.get(b)) do
        if not excluded[d.namespace] then
          has = true
          break
        end
      end
      if has then
        table.insert(out, b)
      end
    end
  end
  return out
end

--- The `pi/diagnostics` handler (`(err, params, ctx)`; returns `result, err`).
function M.handle(_, params, ctx)
  local opts = config.get()
  local pi_id = ctx and ctx.client_id
  local uris = type(params) == 'table' and type(params.uris) == 'table' and params.uris or nil
  return async.handle(function()
    local client = vim.lsp.get_client_by_id(pi_id)
    local encoding = client and client.offset_encoding or 'utf-16'
    local excluded = M.pi_namespaces(pi_id)
    local bufs, fresh, documents = {}, {}, {}
    if uris then
      for _, uri in ipairs(uris) do
        local b, just_loaded = servers.load(uri)
        if b then
          table.insert(bufs, b)
          fresh[b] = just_loaded
        end
      end
      servers.settle(bufs, fresh, pi_id, opts.attach_timeout_ms, opts.attach_grace_ms, function(b)
        return (M.changes[b] or 0) > 0
      end)
    else
      bufs = workspace_buffers(client, pi_id, excluded)
    end
    for _, b in ipairs(bufs) do
      table.insert(documents, M.document(b, pi_id, encoding, excluded))
    end
    return { documents = documents }
  end, opts.attach_timeout_ms + 1000, { code = -32803, message = 'pi_lsp: the documents did not load in time' })
end

local queued, queued_versions, timer = {}, {}, nil

local PUBLISH = 'textDocument/publishDiagnostics'

--- file name -> `version` of the publishDiagnostics being handled for it (while its handler runs)
local publishing = {}

--- The publishDiagnostics handler that notes the publish's version, around `original`.
local function dating(original)
  return function(err, result, ctx, cfg)
    local name = nil
    if type(result) == 'table' and type(result.uri) == 'string' and type(result.version) == 'number' then
      name = vim.uri_to_fname(result.uri)
      publishing[name] = result.version
    end
    local ok, value = pcall(original, err, result, ctx, cfg)
    if name then
      publishing[name] = nil
    end
    if not ok then
      error(value, 0)
    end
    return value
  end
end

--- Wrap the global publishDiagnostics handler once (again if something replaced it since).
local function wrap_publish()
  local current = vim.lsp.handlers[PUBLISH]
  if type(current) == 'function' and current ~= M._dating_handler then
    M._dating_handler = dating(current)
    vim.lsp.handlers[PUBLISH] = M._dating_handler
  end
end

--- The version that dates a change of `bufnr`'s diagnostics now (see the module doc), or nil when
--- pi-lsp does not track the buffer.
function M.change_version(bufnr)
  local sent = require('pi_lsp.versions').get(bufnr)
  if sent == nil then
    return nil
  end
  local published = publishing[api.nvim_buf_get_name(bufnr)]
  if published ~= nil and published <= sent then
    return published
  end
  return sent
end

--- How many times the diagnostics of each buffer changed (any namespace), by buffer number.
M.changes = {}

--- Send the queued uris to each pi-lsp client whose workspace holds them.
local function flush()
  local uris, dated = queued, queued_versions
  queued, queued_versions = {}, {}
  for _, id in pairs(client_mod.by_root) do
    local client = vim.lsp.get_client_by_id(id)
    if client then
      local roots, mine, versions = folders(client), {}, nil
      for uri, path in pairs(uris) do
        if under(path, roots) then
          table.insert(mine, uri)
          if dated[uri] then
            versions = versions or {}
            versions[uri] = dated[uri]
          end
        end
      end
      if #mine > 0 then
        table.sort(mine)
        client_mod.notify(client, 'pi/diagnosticsChanged', { uris = mine, versions = versions })
      end
    end
  end
end

--- The `DiagnosticChanged` autocommand callback (`args.buf`; `args.data.diagnostics` on 0.10+).
function M.on_changed(args)
  local bufnr = args.buf
  if not bufnr or not api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return
  end
  M.changes[bufnr] = (M.changes[bufnr] or 0) + 1
  local name = api.nvim_buf_get_name(bufnr)
  if name == '' or next(client_mod.by_root) == nil then
    return
  end
  local data = type(args.data) == 'table' and args.data.diagnostics or nil
  if type(data) == 'table' and #data > 0 then
    local excluded, foreign = M.pi_namespaces(nil), false
    for _, d in ipairs(data) do
      if not excluded[d.namespace] then
        foreign = true
        break
      end
    end
    if not foreign then
      return -- only pi-lsp's own diagnostics changed
    end
  end
  local uri = vim.uri_from_bufnr(bufnr)
  local version = M.change_version(bufnr)
  if queued[uri] == nil then
    queued_versions[uri] = version or false
  elseif queued_versions[uri] then -- coalesced: the newest, undated if one is
    queued_versions[uri] = version and math.max(version, queued_versions[uri]) or false
  end
  queued[uri] = name
  if not timer then
    timer = uv.new_timer()
    timer:start(config.get().diagnostics_coalesce_ms, 0, vim.schedule_wrap(function()
      timer:close()
      timer = nil
      flush()
    end))
  end
end

--- Create the `DiagnosticChanged` autocommand in augroup `group` and date language servers'
--- publishes (`wrap_publish`).
function M.setup(group)
  api.nvim_create_autocmd('DiagnosticChanged', { group = group, callback = M.on_changed })
  wrap_publish()
end

return M
