--- pi_lsp.health: `:checkhealth pi_lsp`, on both health APIs (0.7's `health.report_*`, 0.9+'s
--- `vim.health.*`). Checks: the problems `setup()` found in its options, the server command and its version (the running client's
--- `serverInfo` when Neovim keeps it, else `pi-lsp --version`), the settings, and the API key
--- variable named by `settings.apiKeyEnv`, and what the running server reports through
--- `pi/health` (whether auto-allowed bash commands run in the bubblewrap sandbox), and the
--- language servers the agent can ask through this editor (issue 17).
local M = {}

local function reporter()
  local h = vim.health
  if h and h.start then
    return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info }
  end
  local old = require('health')
  return {
    start = old.report_start,
    ok = old.report_ok,
    warn = old.report_warn,
    error = old.report_error,
    info = old.report_info,
  }
end

local function server_version(cmd)
  for _, id in pairs(require('pi_lsp.client').by_root) do
    local client = vim.lsp.get_client_by_id(id)
    local info = client and client.server_info
    if type(info) == 'table' and info.name then
      return string.format('%s %s (serverInfo of the running client)', info.name, tostring(info.version or ''))
    end
  end
  local argv = vim.deepcopy(cmd)
  table.insert(argv, '--version')
  local out = vim.fn.system(argv)
  if vim.v.shell_error ~= 0 then
    return nil, vim.trim(out)
  end
  return vim.trim(out), nil
end

local function server_health(report)
  local client_mod = require('pi_lsp.client')
  for _, id in pairs(client_mod.by_root) do
    local client = vim.lsp.get_client_by_id(id)
    if client then
      local reply = client_mod.request_sync(client, 'pi/health', {}, 5000)
      local sandbox = reply and reply.result and reply.result.sandbox
      if type(sandbox) ~= 'table' then
        report.warn('the running server did not answer pi/health')
      elseif sandbox.available then
        report.ok(string.format('bash sandbox: %s (auto-allowed commands run read-only, offline)', tostring(sandbox.tool)))
      elseif sandbox.mode == 'off' then
        report.warn('bash sandbox is off (pi.bash.sandbox = "off"): auto-allowed commands run unsandboxed')
      else
        local advice = sandbox.mode == 'required' and 'every bash command asks (pi.bash.sandbox = "required")'
          or 'auto-allowed commands run unsandboxed, judged by the policy alone'
        report.warn(string.format('bash sandbox unavailable: %s; %s', tostring(sandbox.reason), advice), {
          'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow unprivileged user namespaces',
        })
      end
      return
    end
  end
  report.info('no pi-lsp client is running: start one (open a file) to see the bash sandbox status')
end

--- Issue 17: the user's language servers the agent can ask (attached to loaded buffers).
local function language_servers(report)
  local ls = require('pi_lsp.language_servers')
  local names, seen = {}, {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      for _, c in ipairs(ls.others(b)) do
        if not seen[c.name] then
          seen[c.name] = true
          table.insert(names, c.name)
        end
      end
    end
  end
  table.sort(names)
  if #names > 0 then
    report.info('language servers the agent can ask (definition, references, rename, diagnostics): ' .. table.concat(names, ', '))
  else
    report.info('no language server is attached to a buffer: the agent\'s language tools and the diagnostics '
      .. 'after its edits need one (vim.lsp.start, nvim-lspconfig, vim.lsp.enable); see :help pi_lsp-language-servers')
  end
end

function M.check()
  local report = reporter()
  local config = require('pi_lsp.config').get()
  report.start('pi_lsp')
  if vim.fn.has('nvim-0.7') == 1 then
    local v = vim.version()
    report.ok(string.format('Neovim %d.%d.%d', v.major, v.minor, v.patch))
  else
    report.error('Neovim 0.7 or newer is needed')
  end

  local problems = require('pi_lsp.config').problems
  if #problems == 0 then
    report.ok('setup() options are valid')
  else
    for _, problem in ipairs(problems) do
      report.warn('setup(): ' .. problem, { 'Fix it in your require("pi_lsp").setup({...}) call; see :help pi_lsp-options' })
    end
  end

  local problem = require('pi_lsp.client').command_problem()
  if problem then
    report.error(problem, {
      'Install the server from a checkout: `pipx install /path/to/pi-lsp` (or `pip install -e .` in it)',
      'or point the plugin at it: require("pi_lsp").setup({ cmd = { "/path/to/pi-lsp" } })',
    })
  else
    local version, err = server_version(config.cmd)
    if version then
      report.ok(string.format('server `%s` found: %s', vim.fn.exepath(config.cmd[1]), version))
    else
      report.error(string.format('server `%s` found but `--version` failed: %s', config.cmd[1], err or '?'))
    end
  end

  local settings = config.settings or {}
  report.info(string.format('settings: model %s, baseUrl %s',
    tostring(settings.model or '(server default)'), tostring(settings.baseUrl or '(server default)')))
  if settings.apiKeyEnv then
    local value = vim.env[settings.apiKeyEnv]
    if value and value ~= '' then
      report.ok(string.format('API key variable %s is set', settings.apiKeyEnv))
    else
      report.warn(string.format('API key variable %s is not set', settings.apiKeyEnv), {
        string.format('export %s=... in the shell that starts Neovim', settings.apiKeyEnv),
      })
    end
  else
    report.info('settings.apiKeyEnv is not set: requests carry no API key (fine for local model servers)')
  end
  server_health(report)
  language_servers(report)
end

return M
