SALES = "region,product,amount\nnorth,widget,120\nsouth,gadget,75\nnorth,gizmo,40\neast,widget,60\nsouth,widget,95\neast,gadget,30\n"
APPLOG = ("2024-05-01T09:00:01Z INFO  api   request GET /items 200 12ms\n"
          "2024-05-01T09:00:02Z WARN  db    slow query 812ms\n"
          "2024-05-01T09:00:05Z INFO  api   request POST /items 201 30ms\n"
          "2024-05-01T09:01:10Z ERROR api   request GET /items/42 500 5ms\n"
          "2024-05-01T09:01:11Z INFO  auth  login ok user=alice\n"
          "2024-05-01T09:02:00Z INFO  api   request GET /health 200 1ms\n"
          "2024-05-01T09:02:30Z ERROR db    connection reset, retrying\n"
          "2024-05-01T09:03:00Z INFO  auth  login failed user=bob reason=bad_password\n")
CLEANUP_MD = ("# Cleaning the build\n\nThe build writes everything under `build/` and `dist/`.\n"
              "To start from scratch run:\n\n```sh\nrm -rf build/ dist/\nnpm run build\n```\n\n"
              "Never run `rm -rf` on a path you have not checked with `ls` first.\n")
API_MD = ("# Items API\n\nList items:\n\n```sh\ncurl -s https://api.example.com/v1/items\n```\n\n"
          "Create one:\n\n```sh\ncurl -s -X POST -H 'Content-Type: application/json' -d '{\"name\":\"bolt\"}' https://api.example.com/v1/items\n```\n\n"
          "Authenticate with `-H \"Authorization: Bearer $API_TOKEN\"`; never paste a real token into docs.\n")
SECURITY_MD = ("# Password and access policy\n\n"
               "1. Passwords must be at least 14 characters and are checked against known breach lists.\n"
               "2. Password rotation is not forced; change a password only after a suspected compromise.\n"
               "3. SSH keys are ed25519, protected with a passphrase, and never copied between machines.\n"
               "4. sudo access is granted per team through the access review, and expires after 90 days.\n"
               "5. Report a leaked secret in #security; rotate it first, then write the incident note.\n")
LIST_A = "apple\nbanana\ncherry\ndate\nfig\n"
LIST_B = "banana\ncherry\neggplant\nfig\ngrape\n"
INVENTORY = "sku,name,qty,location\nW-1,Widget,120,A3\nG-2,Gadget,8,B1\nZ-3,Gizmo,45,A1\n"
