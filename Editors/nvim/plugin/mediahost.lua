-- :Mediahost search|browse|favorites|history|downloads|lists (see lua/mediahost/init.lua).
if vim.g.loaded_mediahost then
  return
end
vim.g.loaded_mediahost = true

vim.api.nvim_create_user_command("Mediahost", function(arguments)
  require("mediahost").command(arguments)
end, {
  nargs = "*",
  desc = "mediahost: search, browse, favorites, history, downloads, lists",
  complete = function(lead, line)
    return require("mediahost").complete(lead, line)
  end,
})
