--- pi_lsp.language_servers: the user's own language servers as seen from a buffer (issue 17): the
--- LSP clients attached to it other than pi-lsp, what they support, loading a file that is not
--- loaded (hidden) so they attach, and bounded requests to them.
---
--- Public APIs only, on each version: `vim.lsp.get_client_by_id` and `vim.lsp.buf_is_attached`
--- (which also see clients still initializing), `client:supports_method` on 0.11 (dynamic
--- registrations count), else `client.server_capabilities`.
local client_mod = require('pi_lsp.client')
local async = require('pi_lsp.async')

local M = {}

local api = vim.api
local uv = vim.uv or vim.loop
local HAS_011 = vim.fn.has('nvim-0.11') == 1

--- The server capability of each method pi-lsp may relay (for Neovim 0.7).
M.PROVIDERS = {
  ['textDocument/definition'] = 'definitionProvider',
  ['textDocument/references'] = 'referencesProvider',
  ['textDocument/rename'] = 'renameProvider',
  ['textDocument/documentSymbol'] = 'documentSymbolProvider',
  ['textDocument/hover'] = 'hoverProvider',
}

--- Whether `client` is a pi-lsp client (started by this plugin, or the one asking: `pi_id`).
function M.is_pi(client, pi_id)
  if client.id == pi_id then
    return true
  end
  for _, id in pairs(client_mod.by_root) do
    if id == client.id then
      return true
    end
  end
  return false
end

local function stopped(client)
  if HAS_011 then
    return client:is_stopped()
  end
  return client.is_stopped ~= nil and client.is_stopped()
end

--- The highest client id seen so far (see `attached`).
local highest = 0

--- Every client attached to `bufnr`, those still initializing included: `vim.lsp.get_clients`
--- (0.11) and `buf_get_clients` (0.7) leave those out, yet a server that the buffer's FileType just
--- started is one to wait for. `get_client_by_id` and `buf_is_attached` see them; client ids are
--- consecutive integers, probed up to 64 past the highest id seen.
local function attached(bufnr)
  local known = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, c in ipairs(known) do
    highest = math.max(highest, c.id)
  end
  for _, id in pairs(client_mod.by_root) do
    highest = math.max(highest, id)
  end
  local out = {}
  for id = 1, highest + 64 do
    local c = vim.lsp.get_client_by_id(id)
    if c then
      highest = math.max(highest, id)
      if vim.lsp.buf_is_attached(bufnr, id) then
        table.insert(out, c)
      end
    end
  end
  return out
end

--- The clients attached to `bufnr` other than pi-lsp, in attach order (client id order), those
--- still initializing included (`client.initialized` tells).
function M.others(bufnr, pi_id)
  local out = {}
  for _, c in ipairs(attached(bufnr)) do
    if not M.is_pi(c, pi_id) and not stopped(c) then
      table.insert(out, c)
    end
  end
  return out
end

--- The names of `clients`, as a list.
function M.names(clients)
  local names = {}
  for _, c in ipairs(clients) do
    table.insert(names, c.name)
  end
  return names
end

--- Whether `client` answers `method` for `bufnr` (an initializing client does not yet).
function M.supports(client, method, bufnr)
  if client.initialized ~= true then
    return false
  end
  if HAS_011 then
    return client:supports_method(method, bufnr)
  end
  local provider = (client.server_capabilities or {})[M.PROVIDERS[method] or '']
  return provider ~= nil and provider ~= false
end

--- Whether `client` finished initializing (its capabilities are known; 0.11 starts with
--- `server_capabilities = {}`, so only `initialized` tells).
local function ready(client)
  return client.initialized == true
end

--- The buffer of `uri`, loaded hidden when it is not loaded: `bufnr, just_loaded` or `nil, problem`.
--- The buffer is not shown, not listed and not modified; filetype detection runs (as when the user
--- opens the file) so the user's language-server autostart attaches. The swap-file question is
--- suppressed ('shortmess' A) so a handler never waits for a key.
function M.load(uri)
  local buf = require('pi_lsp.documents').find_buf(uri)
  if buf then
    return buf, false
  end
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok or type(uri) ~= 'string' or not uri:match('^file:') then
    return nil, 'not a file uri: ' .. tostring(uri)
  end
  if vim.fn.filereadable(fname) ~= 1 then
    return nil, 'no such file: ' .. fname
  end
  buf = vim.fn.bufadd(fname)
  local shortmess = vim.o.shortmess
  vim.o.shortmess = shortmess .. 'A'
  local loaded, err = pcall(vim.fn.bufload, buf)
  vim.o.shortmess = shortmess
  if not loaded then
    return nil, 'could not load ' .. fname .. ': ' .. tostring(err)
  end
  if vim.bo[buf].filetype == '' then
    api.nvim_buf_call(buf, function()
      vim.cmd('silent! filetype detect')
    end)
  end
  return buf, true
end

--- Whether a language server is expected to attach to `bufnr`: a running client (other than
--- pi-lsp) lists its filetype in `config.filetypes` (nvim-lspconfig, vim.lsp.config) or is attached
--- to another buffer of that filetype.
function M.expected(bufnr, pi_id)
  local ft = vim.bo[bufnr].filetype
  if ft == '' then
    return false
  end
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, c in ipairs(all) do
    if not M.is_pi(c, pi_id) and vim.tbl_contains((c.config or {}).filetypes or {}, ft) then
      return true
    end
  end
  for _, b in ipairs(api.nvim_list_bufs()) do
    if b ~= bufnr and api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == ft and #M.others(b, pi_id) > 0 then
      return true
    end
  end
  return false
end

--- Wait (bounded by `timeout_ms`) until the language servers of `bufs` can be asked: every
--- attached client has initialized, and each buffer in `fresh` (just loaded) has a client attached
--- and, when `first(b)` is given, `first(b)` is true (e.g. its first diagnostics arrived). A fresh
--- buffer no running server is expected for (`M.expected`) is waited for at most `grace_ms`
--- (autostarts attach during FileType, some a moment later); one without a filetype not at all.
--- Call inside `pi_lsp.async.handle`.
function M.settle(bufs, fresh, pi_id, timeout_ms, grace_ms, first)
  local start = uv.now()
  local expected = {}
  for _, b in ipairs(bufs) do
    expected[b] = fresh[b] and M.expected(b, pi_id)
  end
  return async.wait_until(function()
    for _, b in ipairs(bufs) do
      local others = M.others(b, pi_id)
      if fresh[b] and #others == 0 then
        if vim.bo[b].filetype ~= '' and (expected[b] or uv.now() - start < grace_ms) then
          return false
        end
      end
      for _, c in ipairs(others) do
        if not ready(c) then
          return false
        end
      end
      if fresh[b] and #others > 0 and first and not first(b) then
        return false
      end
    end
    return true
  end, timeout_ms)
end

--- Cancel request `id` of `client` (sends `$/cancelRequest`).
local function cancel(client, id)
  if HAS_011 then
    pcall(client.cancel_request, client, id)
  else
    pcall(client.cancel_request, id)
  end
end

--- Send `method` with `params[i]` to each of `clients` and wait (at most `timeout_ms`) for every
--- reply. Returns a list (same order) of `{err = ResponseError|string|nil, result = any}`; a
--- server that did not answer in time gets its request cancelled and `err = 'did not answer
--- within N ms'`. Call inside `pi_lsp.async.handle`.
function M.request_all(clients, method, params, bufnr, timeout_ms)
  local replies, pending, ids = {}, #clients, {}
  if pending == 0 then
    return replies
  end
  async.await(function(resume)
    for i, c in ipairs(clients) do
      local ok, sent, id = pcall(client_mod.request, c, method, params[i], function(err, result)
        if replies[i] == nil then
          replies[i] = { err = err, result = result }
          pending = pending - 1
          if pending == 0 then
            resume(true)
          end
        end
      end, bufnr)
      ids[i] = ok and id or nil
      if (not ok or not sent) and replies[i] == nil then
        replies[i] = { err = ok and 'the client is stopped' or ('the request could not be sent: ' .. tostring(sent)) }
        pending = pending - 1
      end
    end
    if pending == 0 then
      resume(true)
    end
  end, timeout_ms)
  for i, c in ipairs(clients) do
    if replies[i] == nil then
      replies[i] = { err = string.format('did not answer within %d ms', timeout_ms) }
      if ids[i] then
        cancel(c, ids[i])
      end
    end
  end
  return replies
end

return M
