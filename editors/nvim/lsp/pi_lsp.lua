---@brief
--- pi-lsp for Neovim 0.11's `vim.lsp.config` / `vim.lsp.enable('pi_lsp')`.
---
--- `filetypes` is left out so every buffer may attach; note that 0.11 attaches on FileType, which
--- never fires for a buffer without a filetype: `require('pi_lsp').setup()` attaches on
--- BufReadPost/BufNewFile instead and is the tested way (Neovim 0.7). This file follows 0.11's
--- documented API and is not tested here.
local client = require('pi_lsp.client')
local config = require('pi_lsp.config').get()

---@type vim.lsp.Config
return {
  cmd = config.cmd,
  root_markers = config.root_markers,
  capabilities = client.capabilities(),
  handlers = client.handlers(),
  init_options = { pi = config.settings },
  settings = { pi = config.settings },
  flags = { debounce_text_changes = config.debounce_text_changes },
  -- Neovim sent didOpen (version 0) just before: from here on pi_lsp.versions follows the
  -- versions it sends (the stale-edit check needs them)
  on_attach = function(_, bufnr)
    require('pi_lsp.versions').track(bufnr)
  end,
}
