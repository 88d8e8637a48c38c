-- The README's "manual" install, as the tests use it: put the plugin on 'runtimepath'.
-- (The scenarios call require('pi_lsp').setup(opts) themselves with their settings.)
vim.opt.runtimepath:prepend(vim.env.PI_LSP_NVIM_PLUGIN)
