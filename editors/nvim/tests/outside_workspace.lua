-- :Pi from a file outside every workspace goes to the current directory's workspace, and the
-- user is told so (message and transcript), also when the prompt is sent from the prompt buffer
-- opened there; from a file inside it nothing extra is said.
local H = dofile(vim.env.PI_TEST_HELPERS)

local function notices()
  local found = {}
  for _, n in ipairs(H.notifications) do
    if n.message:find('is not inside it', 1, true) then
      table.insert(found, n.message)
    end
  end
  return found
end

H.run(function()
  require('pi_lsp').setup({})
  local ws = vim.fn.fnamemodify(vim.fn.getcwd(), ':~')
  local expected = string.format('pi_lsp: the prompt goes to the workspace %s (the current directory): %s is not inside it',
    ws, vim.fn.fnamemodify(vim.env.PI_TEST_OUTSIDE, ':~'))
  vim.cmd('edit greet.py')
  H.check('client started', H.client() ~= nil)
  vim.cmd('Pi inside')
  H.check('the first run ended', H.wait_run(20000))
  vim.cmd('Pi') -- the prompt buffer, opened from a file inside
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'inside again' })
  vim.cmd('stopinsert')
  require('pi_lsp.prompt_buffer').send()
  H.check('the second run ended', H.wait_run(20000))
  H.check('no notice from a file inside', #notices() == 0, H.notifications)
  vim.cmd('close')
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.PI_TEST_OUTSIDE))
  vim.cmd('Pi outside')
  H.check('the third run ended', H.wait_run(20000))
  H.check('told which workspace', notices()[1] == expected, { notices(), expected })
  H.check('the transcript says it too', H.transcript_has(expected:gsub('^pi_lsp: ', '')), require('pi_lsp.transcript').lines())
  vim.cmd('Pi') -- the prompt buffer, opened from the outside file
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'outside again' })
  vim.cmd('stopinsert')
  require('pi_lsp.prompt_buffer').send()
  H.check('the fourth run ended', H.wait_run(20000))
  H.check('told again from the prompt buffer', #notices() == 2 and notices()[2] == expected, notices())
  H.check('the same client served all', #vim.tbl_keys(require('pi_lsp.client').by_root) == 1,
    require('pi_lsp.client').by_root)
end)
