-- :Pi from a file outside every workspace goes to the current directory's workspace, and the
-- user is told so (message and transcript); from a file inside it nothing extra is said.
local H = dofile(vim.env.PI_TEST_HELPERS)

H.run(function()
  require('pi_lsp').setup({})
  local ws = vim.fn.getcwd()
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi inside')
  H.check('the first run ended', H.wait_run(20000))
  H.check('no notice from a file inside', not H.notified('outside every workspace'), H.notifications)
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.PI_TEST_OUTSIDE))
  vim.cmd('Pi outside')
  H.check('the second run ended', H.wait_run(20000))
  local home_ws = vim.fn.fnamemodify(ws, ':~')
  local notice = nil
  for _, n in ipairs(H.notifications) do
    if n.message:find('outside every workspace', 1, true) then
      notice = n.message
    end
  end
  H.check('told which workspace', notice ~= nil and notice:find(home_ws, 1, true) ~= nil
    and notice:find('a.txt', 1, true) ~= nil, { notice = notice, ws = home_ws })
  H.check('the transcript says it too', H.transcript_has('the prompt goes to the workspace ' .. home_ws),
    require('pi_lsp.transcript').lines())
  H.check('the same client served both', #vim.tbl_keys(require('pi_lsp.client').by_root) == 1,
    require('pi_lsp.client').by_root)
end)
