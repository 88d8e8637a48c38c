-- pi_lsp: load guard and user commands. The work happens in lua/pi_lsp/ (loaded on first use).
if vim.g.loaded_pi_lsp then
  return
end
vim.g.loaded_pi_lsp = true

if vim.fn.has('nvim-0.7') ~= 1 then
  vim.notify('pi_lsp needs Neovim 0.7 or newer', vim.log.levels.ERROR)
  return
end

local command = vim.api.nvim_create_user_command

command('Pi', function(cmd)
  require('pi_lsp').prompt(cmd.args, cmd)
end, {
  nargs = '*',
  range = true,
  desc = 'pi-lsp: send a prompt (a range adds the selection as context); without text, open a prompt buffer',
})

command('PiSteer', function(cmd)
  require('pi_lsp').send('steer', cmd.args, cmd)
end, {
  nargs = '*',
  range = true,
  desc = "pi-lsp: steer the running agent (sent with its next model request); without text, the prompt buffer's",
})

command('PiQueue', function(cmd)
  require('pi_lsp').send('queue', cmd.args, cmd)
end, {
  nargs = '*',
  range = true,
  desc = "pi-lsp: queue a prompt that runs when the current run ends; without text, the prompt buffer's",
})

command('PiAbort', function()
  require('pi_lsp').abort()
end, { nargs = 0, desc = 'pi-lsp: stop the running prompt' })

command('PiLog', function()
  require('pi_lsp').log()
end, { nargs = 0, desc = "pi-lsp: show the server's log messages" })

command('PiTools', function(cmd)
  require('pi_lsp').tools(cmd.fargs)
end, { nargs = '*', desc = 'pi-lsp: list the tools, or set the active ones' })

command('PiChanges', function(cmd)
  require('pi_lsp').changes(cmd.fargs)
end, { nargs = '*', desc = "pi-lsp: review the agent's changes (files, hunks) and keep or undo them" })
