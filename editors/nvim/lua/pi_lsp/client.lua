--- pi_lsp.client: starting pi-lsp for a workspace root and attaching buffers to it.
---
--- One client per workspace root. Neovim 0.7: `vim.lsp.start_client` +
--- `vim.lsp.buf_attach_client`. Neovim 0.8+: `vim.lsp.start` (reuses the client of the same
--- name and root); 0.11+: `vim.lsp.start(config, {attach = false})` for a client without a
--- buffer and `client:request` (method call syntax). Chosen by feature detection; 0.7.2 and
--- 0.11.x are tested (0.8 to 0.10 are not).
local config = require('pi_lsp.config')

local M = {}

local uv = vim.uv or vim.loop
local HAS_011 = vim.fn.has('nvim-0.11') == 1

--- Client ids by workspace root (absolute folder path).
M.by_root = {}

--- Capabilities under `capabilities.experimental.pi` (design.md section 5). Neovim can save,
--- reload and load closed files into buffers, reports its 'modified' flag, and answers
--- `pi/requestApproval` with a prompt the server can withdraw (`pi_lsp.approvals`).
M.PI_FEATURES = {
  saveDocuments = true,
  reloadDocuments = true,
  editClosedFiles = true,
  documentState = true,
  approvals = true,
  review = true, -- pi/reviewEdit: pi_lsp.review
  toolEvents = true, -- pi/event for our own pi/executeToolCall(s) too: the transcript shows them
}

local function is_dir(path)
  local stat = uv.fs_stat(path)
  return stat ~= nil and stat.type == 'directory'
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

--- The workspace root of a file path: the nearest parent folder holding a root marker, else the
--- current directory when the file is under it, else nil (the buffer is not attached).
function M.find_root(path)
  if not path or path == '' then
    return nil
  end
  path = vim.fn.fnamemodify(path, ':p')
  local dir = is_dir(path) and path or vim.fn.fnamemodify(path, ':h')
  dir = dir:gsub('/$', '')
  local markers = config.get().root_markers
  local probe = dir
  while probe and probe ~= '' do
    for _, marker in ipairs(markers) do
      if exists(probe .. '/' .. marker) then
        return probe
      end
    end
    local parent = vim.fn.fnamemodify(probe, ':h')
    if parent == probe then
      break
    end
    probe = parent
  end
  local cwd = vim.fn.getcwd()
  if dir == cwd or dir:sub(1, #cwd + 1) == cwd .. '/' then
    return cwd
  end
  return nil
end

--- The last document version this client sent for `bufnr` (the didChange version; see
--- `pi_lsp.versions`), else `b:changedtick` for a buffer that is not attached.
function M.buf_version(bufnr)
  local version = require('pi_lsp.versions').get(bufnr)
  if type(version) == 'number' then
    return version
  end
  return vim.api.nvim_buf_get_changedtick(bufnr)
end

--- Send a request; `callback(err, result)` runs on the main loop. Returns false when the client
--- refused to send (it is stopped).
function M.request(client, method, params, callback, bufnr)
  local handler = function(err, result)
    callback(err, result)
  end
  if HAS_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Send a request and wait up to `timeout_ms` for its reply: `{result=...}` / `{err=...}`, or nil
--- (timed out or the client is stopped). For :checkhealth, never on a hot path.
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if HAS_011 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

--- Send a notification; returns false when the client is stopped.
function M.notify(client, method, params)
  if HAS_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- The client capabilities: Neovim's own plus `experimental.pi`.
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  local pi = vim.tbl_extend('force', vim.deepcopy(M.PI_FEATURES), require('pi_lsp.knowledge').capabilities())
  caps.experimental = vim.tbl_extend('force', caps.experimental or {}, { pi = pi })
  return caps
end

--- The handlers pi-lsp needs (server requests and notifications), keyed by method.
function M.handlers()
  local documents = require('pi_lsp.documents')
  local approvals = require('pi_lsp.approvals')
  local transcript = require('pi_lsp.transcript')
  return vim.tbl_extend('force', require('pi_lsp.knowledge').handlers(), {
    ['workspace/applyEdit'] = documents.apply_edit,
    ['pi/saveDocuments'] = documents.save_documents,
    ['pi/reloadDocuments'] = documents.reload_documents,
    ['window/showMessageRequest'] = approvals.show_message_request,
    ['pi/requestApproval'] = approvals.request_approval,
    ['pi/approvalWithdrawn'] = approvals.approval_withdrawn,
    ['pi/reviewEdit'] = require('pi_lsp.review').review_edit,
    ['pi/reviewWithdrawn'] = require('pi_lsp.review').review_withdrawn,
    ['pi/event'] = require('pi_lsp.run').on_event,
    ['window/logMessage'] = transcript.on_log_message,
    ['window/showMessage'] = transcript.on_show_message,
  })
end

--- The `vim.lsp` client config for a workspace root (also what `lsp/pi_lsp.lua` returns,
--- without `root_dir`).
function M.build_config(root)
  local opts = config.get()
  local pi_settings = vim.deepcopy(opts.settings or {})
  if next(pi_settings) == nil then
    pi_settings = vim.empty_dict() -- an empty Lua table would go out as a JSON array
  end
  return {
    name = 'pi_lsp',
    cmd = vim.deepcopy(opts.cmd),
    cmd_env = opts.cmd_env,
    root_dir = root,
    workspace_folders = root and { { uri = vim.uri_from_fname(root), name = root } } or nil,
    capabilities = M.capabilities(),
    handlers = M.handlers(),
    init_options = { pi = pi_settings },
    settings = { pi = pi_settings },
    flags = { debounce_text_changes = opts.debounce_text_changes },
    on_init = function(client)
      -- the buffers attached so far get their didOpen (version 0) right after this
      local bufs = {}
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.lsp.buf_is_attached(b, client.id) or (client.attached_buffers or {})[b] then
          table.insert(bufs, b)
        end
      end
      require('pi_lsp.versions').reopened(bufs)
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        M.on_exit(code, signal, client_id)
      end)
    end,
  }
end

--- Why the server command cannot run, or nil when its program is executable.
function M.command_problem()
  local cmd = config.get().cmd
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' or cmd[1] == '' then
    return 'pi_lsp: `cmd` must be a list starting with the server program'
  end
  if vim.fn.executable(cmd[1]) ~= 1 and cmd[1]:find('/', 1, true) then
    -- a path is not looked up on PATH: say what is wrong with the path itself
    return string.format(
      'pi_lsp: `%s` (the server program in `cmd`) is not an executable file. Point `cmd` in '
        .. 'require("pi_lsp").setup() at pi-lsp (e.g. /path/to/pi-lsp/.venv/bin/pi-lsp); see :checkhealth pi_lsp',
      cmd[1]
    )
  elseif vim.fn.executable(cmd[1]) ~= 1 then
    return string.format(
      'pi_lsp: `%s` was not found on PATH. Install pi-lsp from a checkout (`pipx install /path/to/pi-lsp` or '
        .. '`pip install -e .` in it) or set `cmd` in require("pi_lsp").setup(); see :checkhealth pi_lsp',
      cmd[1]
    )
  end
  return nil
end

local warned = false

--- The running client for `root`, started when needed (and `bufnr` attached when given).
--- Returns (client, nil) or (nil, message).
function M.ensure(root, bufnr)
  local id = M.by_root[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if client then
    if bufnr and not vim.lsp.buf_is_attached(bufnr, id) then
      require('pi_lsp.versions').track(bufnr)
      vim.lsp.buf_attach_client(bufnr, id)
    end
    return client, nil
  end
  local problem = M.command_problem()
  if problem then
    if not warned then
      warned = true
      -- scheduled: an error message inside BufReadPost would make Neovim treat the read as failed
      vim.schedule(function()
        vim.notify(problem, vim.log.levels.ERROR)
      end)
    end
    return nil, problem
  end
  local cfg = M.build_config(root)
  if bufnr then
    require('pi_lsp.versions').track(bufnr)
  end
  if HAS_011 then
    id = vim.lsp.start(cfg, { bufnr = bufnr, attach = bufnr ~= nil })
  elseif vim.lsp.start and bufnr then
    id = vim.lsp.start(cfg, { bufnr = bufnr })
  else
    id = vim.lsp.start_client(cfg)
    if id and bufnr then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  if not id then
    return nil, 'pi_lsp: the server could not be started (see :PiLog and :LspLog)'
  end
  M.by_root[root] = id
  M.attach_loaded(root, id)
  return vim.lsp.get_client_by_id(id), nil
end

--- Attach every loaded file buffer under `root` to client `id` (a server started again after an
--- exit must see the buffers, unsaved text included, or it would edit their files as closed ones).
function M.attach_loaded(root, id)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and name ~= ''
      and not vim.lsp.buf_is_attached(b, id) and M.find_root(name) == root then
      require('pi_lsp.versions').track(b)
      vim.lsp.buf_attach_client(b, id)
    end
  end
end

--- Attach `bufnr` when it is a normal file buffer inside a workspace root.
function M.attach(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = M.find_root(name)
  if root then
    M.ensure(root, bufnr)
  end
end

--- The client for the current buffer's workspace (or the current directory), started when
--- needed. Returns (client, nil, notice) or (nil, message). `notice` is nil, or, when the user's
--- file (the current buffer, or the one the prompt buffer was opened from) is not inside the
--- workspace used, a message naming that workspace.
function M.current()
  local bufnr = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = (vim.bo[bufnr].buftype == '' and M.find_root(name)) or vim.fn.getcwd()
  local attachable = vim.bo[bufnr].buftype == '' and name ~= '' and M.find_root(name) == root
  local client, problem = M.ensure(root, attachable and bufnr or nil)
  local file = vim.bo[bufnr].buftype == '' and name or require('pi_lsp.prompt_buffer').origin(bufnr)
  local notice = nil
  if client and file and file ~= '' and M.find_root(file) ~= root then
    notice = string.format('pi_lsp: the prompt goes to the workspace %s (the current directory): %s is not inside it',
      vim.fn.fnamemodify(root, ':~'), vim.fn.fnamemodify(file, ':~'))
  end
  return client, problem, notice
end

--- Listeners called as `fn(code, signal, client_id)` when a pi-lsp client exits.
M.exit_listeners = {}

function M.on_exit(code, signal, client_id)
  for root, id in pairs(M.by_root) do
    if id == client_id then
      M.by_root[root] = nil
    end
  end
  for _, fn in ipairs(M.exit_listeners) do
    pcall(fn, code, signal, client_id)
  end
end

return M
