-- wrk script: GET with the key in FS_KEY, to the path FS_PATH.
local key = os.getenv("FS_KEY") or ""
local path = os.getenv("FS_PATH") or "/"
request = function()
  return wrk.format("GET", path, {["Authorization"] = "Bearer " .. key})
end
