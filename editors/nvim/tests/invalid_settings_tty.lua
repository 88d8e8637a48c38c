-- Sourced by a real Neovim in a terminal (tests/editors/test_nvim.py runs it in tmux and reads the
-- screen): a user's setup with several invalid settings, then a file of the workspace.
require('pi_lsp').setup({
  settings = {
    model = 5, maxTurns = 'many', edit = { review = 'sometimes' }, bash = { sandbox = 'weird' },
    activeTools = { 'read', 'nosuchtool' }, baseUrl = 'http://127.0.0.1:9/v1',
  },
})
vim.cmd('edit greet.py')
