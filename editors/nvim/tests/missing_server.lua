-- Bad input: pi-lsp is not on PATH. Opening a file says so once (clear message, no Lua error),
-- :Pi says so in the transcript, the editor keeps working, :checkhealth says how to install.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({ settings = { model = 'replay' } })
  vim.cmd('edit greet.py')
  local greet = api.nvim_get_current_buf()
  H.wait(200, function() return #H.notifications > 0 end)
  H.check('opening a file reports the missing server', H.notified('`pi-lsp` was not found on PATH'), H.notifications)
  H.check('no client was started', next(H.clients()) == nil)

  -- an ERROR-level vim.notify fails the command (Vim shows it as an error message)
  local ok, err = pcall(vim.cmd, 'Pi hello')
  H.check(':Pi fails with the clear message', not ok and tostring(err):find('was not found on PATH', 1, true), err)
  H.check(':Pi reports the missing server in the transcript', H.transcript_has('!! pi_lsp: `pi-lsp` was not found on PATH'))
  H.check('no run is active', not require('pi_lsp').is_running())

  api.nvim_buf_set_lines(greet, 0, 1, false, { 'def hello():' })
  vim.cmd('silent write')
  H.check('the editor keeps working (edit and :write)', H.read('greet.py'):sub(1, 13) == 'def hello():\n', H.read('greet.py'))

  local health = H.health('pi_lsp')
  H.note('health', health)
  H.check(':checkhealth reports the error', health:find('ERROR: pi_lsp: `pi-lsp` was not found on PATH', 1, true) ~= nil, health)
  H.check(':checkhealth says how to install', health:find('pipx install /path/to/pi-lsp', 1, true) ~= nil, health)

  -- a `cmd` given as a path that is not there: the message names the path, not PATH
  require('pi_lsp').setup({ cmd = { H.uv.cwd() .. '/no-such-dir/pi-lsp' }, settings = { model = 'replay' } })
  local ok_path, err_path = pcall(vim.cmd, 'Pi hello')
  H.check('a missing path is reported as such', not ok_path and tostring(err_path):find('/no-such-dir/pi-lsp` (the server '
    .. 'program in `cmd`) is not an executable file', 1, true) and not tostring(err_path):find('PATH', 1, true), err_path)
end)
