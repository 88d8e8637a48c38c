--- pi_lsp.knowledge: the editor's knowledge for the model (issue 17): what this plugin offers
--- pi-lsp under `capabilities.experimental.pi` and the handlers that answer it.
---
--- * `diagnostics = true`: answers `pi/diagnostics` and sends `pi/diagnosticsChanged`
---   (`pi_lsp.diagnostics`).
--- * `languageRequests = [...]`: the methods answered through `pi/languageRequest` by asking the
---   user's own language servers attached to the document (`pi_lsp.language_requests`).
--- Nothing to configure: any language server attached to a buffer (vim.lsp.start, nvim-lspconfig,
--- 0.11's vim.lsp.enable) is used; pi-lsp itself is never asked.
local M = {}

--- The `experimental.pi` capabilities of this module.
function M.capabilities()
  return {
    diagnostics = true,
    languageRequests = vim.deepcopy(require('pi_lsp.language_requests').METHODS),
  }
end

--- Neovim 0.7's rpc layer refuses to send an error whose code is not in
--- `vim.lsp.protocol.ErrorCodes` (0.10+ lists RequestFailed): add LSP 3.17's RequestFailed.
local function register_request_failed()
  local codes = vim.lsp.protocol.ErrorCodes
  if codes[-32803] == nil then
    codes.RequestFailed = -32803
    codes[-32803] = 'RequestFailed'
  end
end

--- The handlers of this module, keyed by method (merged into `pi_lsp.client.handlers()`).
function M.handlers()
  register_request_failed()
  return {
    ['pi/languageRequest'] = require('pi_lsp.language_requests').handle,
    ['pi/diagnostics'] = require('pi_lsp.diagnostics').handle,
  }
end

--- Create the autocommands of this module in augroup `group` (called by `setup`).
function M.setup(group)
  require('pi_lsp.diagnostics').setup(group)
end

return M
