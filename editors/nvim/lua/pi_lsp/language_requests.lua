--- pi_lsp.language_requests: `pi/languageRequest {method, params}` -> `{servers, result}` (issue 17
--- wire contract): pi-lsp asks the user's own language servers through Neovim, which asks the
--- clients attached to that document other than pi-lsp.
---
--- * The document is loaded hidden when it is not loaded, and its servers are waited for
---   (`attach_timeout_ms`); then every attached client that supports `method` is asked, each with
---   the position converted from pi-lsp's encoding to its own (`client.offset_encoding`), all
---   bounded by `language_server_timeout_ms` (late ones are cancelled).
--- * Results are converted back to pi-lsp's encoding. definition/references: the answers
---   concatenated, de-duplicated by uri + range; rename, hover, documentSymbol: the first non-empty
---   answer in attach order. `servers` = the names of the servers asked; `[]` (and `result: null`)
---   when no language server of that document supports the method.
--- * When no server gave a non-empty answer and one failed: a RequestFailed (-32803) error
---   `"<server name>: <its message>"` (several joined by "; ").
--- The handler never blocks Neovim for long: see `pi_lsp.async`.
local async = require('pi_lsp.async')
local config = require('pi_lsp.config')
local enc = require('pi_lsp.encoding')
local servers = require('pi_lsp.language_servers')

local M = {}

--- The methods answered (advertised as `capabilities.experimental.pi.languageRequests`).
M.METHODS = {
  'textDocument/definition',
  'textDocument/references',
  'textDocument/rename',
  'textDocument/documentSymbol',
  'textDocument/hover',
}

local CONCATENATED = { ['textDocument/definition'] = true, ['textDocument/references'] = true }

M.REQUEST_FAILED = -32803
M.INVALID_PARAMS = -32602

local function null(v)
  return v == nil or v == vim.NIL
end

local function empty(v)
  return null(v) or (type(v) == 'table' and next(v) == nil)
end

--- A JSON-RPC error object for a handler's second return value.
function M.error(code, message)
  return { code = code, message = message }
end

--- Convert, in place, the positions of a `method` result for document `uri` from `from` to `to`.
function M.convert_result(method, result, uri, from, to, lines)
  if from == to or empty(result) then
    return result
  end
  local function location(loc)
    if type(loc) ~= 'table' then
      return
    end
    if loc.targetUri then
      enc.range(loc.targetRange, loc.targetUri, from, to, lines)
      enc.range(loc.targetSelectionRange, loc.targetUri, from, to, lines)
      enc.range(loc.originSelectionRange, uri, from, to, lines)
    elseif loc.uri then
      enc.range(loc.range, loc.uri, from, to, lines)
    end
  end
  local function symbols(list)
    for _, s in ipairs(list) do
      if type(s.location) == 'table' then
        location(s.location)
      else
        enc.range(s.range, uri, from, to, lines)
        enc.range(s.selectionRange, uri, from, to, lines)
        if type(s.children) == 'table' then
          symbols(s.children)
        end
      end
    end
  end
  if method == 'textDocument/definition' or method == 'textDocument/references' then
    if result.uri or result.targetUri then
      location(result)
    else
      for _, loc in ipairs(result) do
        location(loc)
      end
    end
  elseif method == 'textDocument/documentSymbol' then
    symbols(result)
  elseif method == 'textDocument/hover' then
    enc.range(result.range, uri, from, to, lines)
  elseif method == 'textDocument/rename' then
    for target, edits in pairs(type(result.changes) == 'table' and result.changes or {}) do
      for _, e in ipairs(edits) do
        enc.range(e.range, target, from, to, lines)
      end
    end
    for _, change in ipairs(type(result.documentChanges) == 'table' and result.documentChanges or {}) do
      if type(change.textDocument) == 'table' and type(change.edits) == 'table' then
        for _, e in ipairs(change.edits) do
          enc.range(e.range, change.textDocument.uri, from, to, lines)
        end
      end
    end
  end
  return result
end

local function range_key(r)
  if type(r) ~= 'table' or type(r.start) ~= 'table' or type(r['end']) ~= 'table' then
    return ''
  end
  return table.concat({ r.start.line, r.start.character, r['end'].line, r['end'].character }, ':')
end

--- Definition/references answers concatenated, de-duplicated by uri + range (a LocationLink by
--- targetUri + targetSelectionRange).
local function concatenate(results)
  local out, seen = {}, {}
  for _, result in ipairs(results) do
    local list = (result.uri or result.targetUri) and { result } or result
    for _, loc in ipairs(list) do
      local key = loc.targetUri and (loc.targetUri .. '#' .. range_key(loc.targetSelectionRange))
        or (tostring(loc.uri) .. '#' .. range_key(loc.range))
      if not seen[key] then
        seen[key] = true
        table.insert(out, loc)
      end
    end
  end
  return out
end

local function message_of(err)
  if type(err) == 'table' then
    return tostring(err.message or vim.inspect(err))
  end
  return tostring(err)
end

--- The work of one request (inside `pi_lsp.async.handle`): `result, err`.
local function answer(method, params, pi_id)
  local opts = config.get()
  local pi_client = vim.lsp.get_client_by_id(pi_id)
  local pi_enc = pi_client and pi_client.offset_encoding or 'utf-16'
  local uri = params.textDocument.uri
  local bufnr, fresh = servers.load(uri)
  if not bufnr then
    return nil, M.error(M.INVALID_PARAMS, 'pi_lsp: ' .. fresh)
  end
  servers.settle({ bufnr }, { [bufnr] = fresh }, pi_id, opts.attach_timeout_ms, opts.attach_grace_ms)
  local asked = {}
  for _, c in ipairs(servers.others(bufnr, pi_id)) do
    if servers.supports(c, method, bufnr) then
      table.insert(asked, c)
    end
  end
  if #asked == 0 then
    return { servers = {}, result = vim.NIL }
  end
  local lines = enc.line_source()
  local per_client = {}
  for i, c in ipairs(asked) do
    local p = vim.deepcopy(params)
    enc.position(p.position, uri, pi_enc, c.offset_encoding or 'utf-16', lines)
    per_client[i] = p
  end
  local replies = servers.request_all(asked, method, per_client, bufnr, opts.language_server_timeout_ms)
  lines = enc.line_source()
  local results, errors = {}, {}
  for i, reply in ipairs(replies) do
    if reply.err then
      table.insert(errors, asked[i].name .. ': ' .. message_of(reply.err))
    elseif not empty(reply.result) then
      table.insert(results, M.convert_result(method, reply.result, uri, asked[i].offset_encoding or 'utf-16', pi_enc, lines))
    end
  end
  if #results == 0 and #errors > 0 then
    return nil, M.error(M.REQUEST_FAILED, table.concat(errors, '; '))
  end
  local result
  if CONCATENATED[method] then
    result = concatenate(results)
  else
    result = results[1]
  end
  return { servers = servers.names(asked), result = null(result) and vim.NIL or result }
end

--- The `pi/languageRequest` handler (`(err, params, ctx)`; returns `result, err`).
function M.handle(_, params, ctx)
  if type(params) ~= 'table' or not vim.tbl_contains(M.METHODS, params.method) then
    return nil, M.error(M.INVALID_PARAMS, 'pi_lsp: unsupported method ' .. tostring(type(params) == 'table' and params.method))
  end
  local inner = params.params
  if type(inner) ~= 'table' or type(inner.textDocument) ~= 'table' or type(inner.textDocument.uri) ~= 'string' then
    return nil, M.error(M.INVALID_PARAMS, 'pi_lsp: params.params.textDocument.uri is missing')
  end
  local opts = config.get()
  local bound = opts.attach_timeout_ms + opts.language_server_timeout_ms + 1000
  return async.handle(function()
    return answer(params.method, inner, ctx and ctx.client_id)
  end, bound, M.error(M.REQUEST_FAILED, 'pi_lsp: the language servers did not answer in time'))
end

return M
