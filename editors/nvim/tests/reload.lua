-- pi/reloadDocuments: greet.py changes on disk under its clean buffer; the agent's edit makes
-- pi-lsp ask Neovim to reload it first (replay session nvim_reload.jsonl). A modified buffer
-- is never reloaded.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

H.run(function()
  require('pi_lsp').setup({
    settings = { baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0, edit = { verifyTimeoutSeconds = 5 } },
  })
  vim.cmd('edit dirty.txt')
  local dirty = api.nvim_get_current_buf()
  api.nvim_buf_set_lines(dirty, 0, 1, false, { 'user text' })
  vim.cmd('edit greet.py') -- stays current: entering a buffer would let Neovim reload it itself
  local greet = api.nvim_get_current_buf()
  local client = H.client()
  H.check('client started', client ~= nil)
  -- a request round trip: the server has handled the didOpen (and fingerprinted the file) before
  -- the file changes under the buffer
  local listed = false
  require('pi_lsp.client').request(client, 'pi/listTools', vim.empty_dict(), function() listed = true end)
  H.check('server answered', H.wait(10000, function() return listed end))

  local f = assert(io.open('greet.py', 'wb'))
  f:write('def greet():\n    return "changed on disk"\n')
  f:close()

  local documents = require('pi_lsp.documents')
  local refused = documents.reload_documents(nil, { uris = { vim.uri_from_bufnr(dirty) } }, {})
  H.check('a modified buffer is not reloaded', #refused.reloaded == 0 and refused.skipped[1]
    and refused.skipped[1].reason == 'the buffer has unsaved changes', refused)
  H.check('the modified buffer keeps the user text', api.nvim_buf_get_lines(dirty, 0, 1, false)[1] == 'user text')

  vim.cmd('Pi edit the greeting')
  H.check('the run ended', H.wait_run(30000))
  local expected = 'def greet():\n    return "edited after the reload"\n'
  H.check('pi-lsp asked for the reload', H.transcript_has('  reloaded greet.py'))
  H.check('the buffer was reloaded, then edited', H.text(greet) == expected, H.text(greet))
  H.check('and saved', H.read('greet.py') == expected, H.read('greet.py'))
  H.check('the edit succeeded', H.transcript_has('  │ Successfully replaced 1 block(s) in greet.py.'))
end)
