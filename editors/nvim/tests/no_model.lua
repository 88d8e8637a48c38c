-- A user who has not configured a model yet: setup({}) (an empty settings table must reach the
-- server as an object, not a list) and :Pi. The server refuses the prompt without any event; the
-- reason must be in the transcript, not only in :PiLog.
local H = dofile(vim.env.PI_TEST_HELPERS)

H.run(function()
  require('pi_lsp').setup({})
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi fix it')
  H.check('the refused run ended', H.wait_run(20000))
  local reply = require('pi_lsp.run').last_reply
  H.check('stopReason error', type(reply) == 'table' and reply.stopReason == 'error', reply)
  H.check('the transcript says why', H.transcript_has('No model is configured'))
  H.check('no complaint about the settings shape', not H.notified('settings must be an object'), H.notifications)
end)
