-- Bad options in setup() (a wrong type, a misspelt name): no Lua error; one WARN notification
-- names each problem once (the option, what it expects, "did you mean" for a misspelling); the
-- valid options are kept and the client starts with the given cmd; :checkhealth lists the
-- problems until a clean setup() clears them.
local H = dofile(vim.env.PI_TEST_HELPERS)

H.run(function()
  local ok, err = pcall(require('pi_lsp').setup, {
    cmd = { 'pi-lsp' },
    settings = 'gpt-4o-mini',
    setting = { model = 'replay' },
    autostart = 'yes',
    root_markers = { '.git', 3 },
    prompt_guard_ms = 123,
  })
  H.check('setup() raised no error', ok, err)
  local warnings = vim.tbl_filter(function(n) return n.level == vim.log.levels.WARN end, H.notifications)
  H.check('one warning notification', #warnings == 1, H.notifications)
  local text = warnings[1] and warnings[1].message or ''
  local expected = {
    '`settings` must be a table, got string "gpt-4o-mini"; the default is used',
    'unknown option `setting` (did you mean `settings`?); it is ignored',
    '`autostart` must be a boolean, got string "yes"; the default is used',
    '`root_markers` must be a list of strings, got an entry 2 = number 3; the default is used',
  }
  for _, line in ipairs(expected) do
    local first = text:find(line, 1, true)
    H.check('reported once: ' .. line, first and not text:find(line, first + 1, true), text)
  end
  H.check('four problems', text:find('4 problems in the options', 1, true), text)
  local config = require('pi_lsp.config').get()
  H.check('the valid options are kept', config.prompt_guard_ms == 123 and config.cmd[1] == 'pi-lsp', config)
  H.check('the bad ones keep their defaults', type(config.settings) == 'table' and config.autostart == true
    and config.root_markers[1] == '.git' and #config.root_markers == 5, config)

  vim.cmd('edit greet.py')
  H.check('the client started with the given cmd (no "not found on PATH")', H.client() ~= nil
    and not H.notified('not found on PATH'), H.notifications)

  local health = H.health('pi_lsp')
  H.note('health', health)
  for _, line in ipairs(expected) do
    H.check(':checkhealth warns: ' .. line, health:find('WARNING: setup(): ' .. line, 1, true), health)
  end

  local before = #H.notifications
  require('pi_lsp').setup({ settings = { model = 'replay' } })
  H.check('a clean setup() notifies nothing', #H.notifications == before, H.notifications)
  health = H.health('pi_lsp')
  H.check(':checkhealth then says the options are valid', health:find('OK: setup() options are valid', 1, true)
    and not health:find('WARNING: setup()', 1, true), health)
end)
