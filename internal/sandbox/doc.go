// Package sandbox emulates the BlueKing IAM authorization API (the bk-iam-saas open API behind ESB
// and the API gateway, plus the bk-iam backend's policy read API) closely enough that a provider which
// passes against it works against a real BlueKing site. Where the real server is odd, the sandbox is
// odd the same way. What the real server does is written down in the package doc of internal/bkiam;
// where this comment and that one disagree, the real server (internal/bkiam) is right and the sandbox
// should follow it.
//
// The provider's acceptance tests, the demo and the benchmarks run against the sandbox, and so can a
// user who wants to try a configuration before pointing it at a real site. Use New to build a *Server
// (an http.Handler), cmd/bkiam-sandbox to run it, and the sandboxtest package to start one inside a Go
// test.
//
// # Contract
//
// The command line, the routes, the inspection and control endpoints and the default model below are
// a fixed interface: tests, scripts and users depend on them. Extend them freely; change none of them
// without keeping the old form working.
//
// Command:
//
//	go run ./cmd/bkiam-sandbox [--listen 127.0.0.1:8080] [--model FILE.json] [--state FILE.json]
//
// Flags and signals:
//   - --listen: the address (default 127.0.0.1:8080; port 0 picks a free port). Once it serves, the
//     command prints one line to stdout: "bkiam-sandbox listening on http://HOST:PORT".
//   - --model: a JSON permission model (see "Model format"), validated on load with an error naming
//     the bad field; without it, the embedded default model.
//   - --state: the file where policies persist across restarts (see "State file"); without it, memory
//     only.
//   - SIGINT or SIGTERM: in-flight requests finish, the state is saved, the command exits 0.
//
// Authorization routes, both transports serving one store, so that a provider configured with
// apigw_url = "http://127.0.0.1:8080" or esb_url = "http://127.0.0.1:8080" talks to the sandbox:
//   - ESB: POST /api/c/compapi/v2/iam/authorization/{batch_instance,batch_resource_creator_action,batch_path}/
//     with credentials in the JSON body or in X-Bkapi-Authorization.
//   - API gateway: POST /api/v1/open/authorization/{batch_instance,batch_resource_creator_action,batch_path}/
//     with credentials only in X-Bkapi-Authorization.
//
// Read routes (gateway only): GET /api/v1/systems/{system}/policies?action_id=…[&type=rbac],
// GET /api/v1/systems/{system}/policies/{backend_id}, and GET /api/v1/open/systems/{system}/policies/
// which answers 301 as it does through a real gateway (details under "Emulated behaviour"); GET
// /api/v1/model/systems/{system}/query[?fields=…], the backend's model of the system (actions with
// their related_resource_types, resource_types with their parents, instance_selections,
// resource_creator_actions), each related type and parent under its own system_id — another
// system's for a type of another system (see "Other systems' resource types").
//
// Access-check routes (gateway only), the backend's "may this subject do this?": POST
// /api/v2/policy/systems/{system}/{auth,auth_by_actions,query,query_by_actions}/[?debug=1&force=1]
// and POST /api/v1/policy/auth_by_resources (details under "Emulated behaviour", "Access checks").
//
// Management routes (gateway only, credentials in X-Bkapi-Authorization): the management API v2
// for grade managers, user groups, group members, group permissions and the subject templates an
// app can see (see the package doc of internal/bkiam, "The management API"), under
// /api/v2/open/management/systems/{system}/, every route ending in "/" (details under "Emulated
// behaviour"):
//
//	POST   grade_managers/                     GET/PUT/DELETE grade_managers/{id}/
//	POST   grade_managers/{id|-}/groups/       GET grade_managers/{id}/groups/
//	PUT    groups/{id}/                        DELETE groups/{id}/
//	GET    groups/{id}/members/                POST groups/{id}/members/
//	DELETE groups/{id}/members/?type=&ids=     PUT groups/{id}/members/-/expired_at/
//	POST/DELETE/GET groups/{id}/policies/     GET groups/{id}/policies/-/actions/
//	DELETE groups/{id}/actions/-/policies/
//	GET    grade_managers/{id}/subject_templates/  GET groups/{id}/subject_templates/
//	GET    group_member_types/{user|department|template}/members/{id}/groups/-/details/?group_ids=
//	       (a member's memberships in 1–100 of the app's groups, expired ones included:
//	       mgmt_member_groups.go)
//
// Gateway generations: the model's "gateway" picks the bk-iam gateway's resource list the sandbox
// plays (gateway_generation.go). "" or "2024", the one the real IAM run here routes by, has no
// admin resources (404 API_NOT_FOUND) and lets every app call the backend's users/{id}/groups;
// "2026" adds the admin resources and asks, for them and for users/{id}/groups, a grant of the
// resource to the app (apps[].gateway_grants), else 403 APP_NO_PERMISSION.
//
// SaaS releases: the model's "saas" picks the release of IAM's SaaS the management routes play
// (saas_release.go). "" or "2025", the SaaS as its source was read (July 2025), is the default;
// "2026" plays the release of July 2026 (bk-iam-saas #3143) in two ways. Its management object
// allow-list (apps[].management_objects: {object_type role|group|template, object_id, api or
// "*"}) lets the app call that API on that grade manager (role) or group though no system it is a
// client of created it, or the web UI did: the path system's client and allow-list checks still
// come first, and an entry takes the place of the ownership checks that follow (a role's entry
// covers the routes on the grade manager, not those on its groups; an object that is gone
// answers as before). And a member add or expiry update with an expired_at more than
// limits.member_expiry_max_days (730, two years) after now is 400 1902412 '{"expired_at":
// ["expired_at must be at most 730 days from now, or permanent"]} (VALIDATE_ERROR)', the
// permanent 4102444800 aside (#3019 lets members be renewed to permanent). The release's own
// code around both could not be read: the order of the checks, the role entry's reach and the
// cap's words and exact length are the sandbox's reading, its refusal the serializers' shape.
//
// Admin routes (2026 gateway; then IAM's admin allow-list, apps[].admin, 403 1902403 without the
// entry; errors in HTTP 200 but for 401/403/404/500): GET /api/v1/open/admin/subjects/{user|department}/{id}/groups/
// (admin_list_subject_groups, subject_joined_group_list) lists the subject's direct memberships,
// expired ones included, newest first, {count, results:[{id, name, expired_at}]}, paged by page and
// page_size (default 10; limit and offset ignored); an unknown subject is 1902000 carrying the
// backend's "sql: no rows in result set" (admin_subject_groups.go).
//
// Leaver cleanup (admin API, 2026 gateway, allow-list apps[].admin "subject_permission_cleanup";
// admin_cleanup.go): DELETE /api/v1/open/admin/cleanup/users/permission/ takes a JSON array of
// {"type": "user", "id": …, "before_at": unix seconds (optional)}, checked as the SaaS's
// SubjectSLZ(many=True) checks it (1902412 with the per-item field errors; an empty array 1902416
// "参数错误: 至少传递一个用户", in HTTP 200 as the v1 open API answers), and answers {} at once. The
// cleanup of each user is carried out after limits.cleanup_delay_ms (500 by default;
// WithCleanupDelay overrides it, on the WithNow clock), before the next call or inspection: every
// custom policy of the user in every system (before_at spares none), then its direct group
// memberships, subject-template memberships and grade-manager memberships, those created after
// before_at kept. Its departments' memberships stay. A second call for a user whose cleanup is
// still pending is dropped silently, as IAM's task drops it while the first runs. Pending cleanups
// are not written to the state file.
//
// and, from the v1 management API, the one route that lists grade managers: GET
// /api/v1/open/management/grade_managers/?system=S[&name=&page=&page_size=], and the one that
// answers groups' attributes: GET /api/v1/open/management/grade_managers/{id}/groups/[?page=&page_size=].
//
// Inspection and control, without credentials, JSON in and out:
//   - GET /_sandbox/policies[?system=S&subject_type=T&subject_id=ID&action=A] answers
//     {"policies":[{"policy_id":3,"system":"bk_cmdb","subject":{"type":"user","id":"alice"},
//     "action":"edit_host","expired_at":4102444800,"any":false,"paths":["/bk_cmdb,host,1/","/bk_cmdb,host,2/"]}]}:
//     one entry per stored policy (PolicyView). A path is its nodes "system,type,id", joined and
//     wrapped by "/"; paths are sorted. any is true for a policy granted with empty instances. A
//     policy of an action related to several types (a combined resource) has
//     "groups":[{"biz":["/bk_cmdb,biz,1/"],"host":["/bk_cmdb,host,7/"]}] instead of paths: one object
//     per resource group, each type's paths sorted. A row a group holds through a permission
//     template has "template_id":N; a policy the real server stores as RBAC relations has "rbac":true;
//     a row with an attribute condition (below) has "expression":{…} as given, instead of paths.
//   - GET /_sandbox/stats answers {"total":N,"errors":N,"requests":{"batch_instance:grant":N,
//     "batch_instance:revoke":N,"batch_path:grant":N,"batch_path:revoke":N,
//     "batch_resource_creator_action":N,"policy_list":N,"policy_get":N,"model_query":N,
//     "policy_auth":N,"policy_auth_by_actions":N,"policy_auth_by_resources":N,"policy_query":N,
//     "policy_query_by_actions":N,
//     "grade_manager:create":N,"grade_manager:get":N,"grade_manager:update":N,"grade_manager:delete":N,
//     "grade_manager:list":N,"group:create":N,"group:list":N,"group:list_v1":N,"group:update":N,"group:delete":N,
//     "member:list":N,"member:add":N,"member:delete":N,"member:expiry":N,"group_policy:grant":N,
//     "group_policy:revoke":N,"group_policy:list":N,"group_policy:delete":N,"group_policy:actions":N,
//     "user_groups":N,"subject_template:list":N,"group_subject_template:list":N},
//     "max_instances_per_call":N}
//     (Stats): the requests received since start or the last reset, errors included.
//     In Go, Server.WaitIdle waits until no authorization call is being served: a call whose
//     client gave up is still carried out, and tests let it land before comparing.
//   - GET /_sandbox/grade_managers answers the management API's state (ManagementView):
//     {"grade_managers":[{"id":1,"system":"bk_cmdb","name":"ops","description":"","members":["alice"],
//     "sync_perm":true,"group_name":"…","authorization_scopes":[{"system":"bk_cmdb","actions":["view_host"],
//     "resources":[{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"host","id":"*"}]]}]}],
//     "subject_scopes":[{"type":"*","id":"*"}],"delete_at":1767229200}],"groups":[{"id":4,"system":"bk_cmdb",
//     "grade_manager":1,"name":"dev","description":"","readonly":false,"sync":true,
//     "members":[{"type":"user","id":"alice","expired_at":4102444800,"created_at":1767225600}]}]},
//     ordered by id, members newest relation first; grade_manager 0 is the system manager ("-");
//     delete_at is set while a grade-manager delete waits; sync marks a grade manager's sync group;
//     the scopes, which IAM's API never answers back, show what to write in an adopted grade
//     manager's configuration. When there are subject templates, a group bound to some has
//     "templates":[{"template":1,"expired_at":4102444800,"created_at":1767225600}] (newest binding
//     first) and the body "subject_templates":[{"id":1,"system":"bk_cmdb","grade_manager":1,
//     "name":"dev","description":"","readonly":true,"source_group":5,"members":[{"type":"user","id":"alice"}]}]
//     (ordered by id, members by type then id); both keys are absent otherwise.
//     In Go: Server.Management, GradeManagers, Groups(gradeManager), Members(group) and
//     SubjectTemplates.
//   - POST /_sandbox/reset clears policies (attribute-condition rows included), the management
//     state, stats and faults, and keeps the model (whose template policies are seeded again).
//   - POST /_sandbox/template_policies with {"system":"bk_cmdb","template_id":7,"group":"1",
//     "action":"edit_host","paths":["/bk_cmdb,host,9/"],"expired_at":0} gives a group (of the
//     model, or of the management API; or, with "user" instead of "group", a user of the model, as
//     an older IAM granted templates to users) a row held through a permission template
//     (Server.AddTemplatePolicy; no paths = any; expired_at 0 = permanent), replacing the row of
//     the same group, action and template. 400 with {"error":…} naming the bad field.
//   - POST /_sandbox/expression_policies with {"system":"bk_cmdb","subject":{"type":"user","id":"alice"},
//     "action":"delete_host","expression":{"op":"AND","content":[{"field":"host.id","op":"in",
//     "value":["1","2"]},{"field":"host.os","op":"eq","value":"linux"}]},"expired_at":0} stands in
//     for IAM's web UI granting a row with an attribute condition (Server.AddExpressionPolicy): a
//     new row each time, answered {"ok":true,"backend_id":N}. The subject is a user of the model
//     (or a directory user synced) or a group of the model or of the management API; the action
//     relates to at least one type (a combined resource too); the expression is in the read
//     routes' form: AND and OR with a non-empty content, leaves {field "TYPE.ATTRIBUTE" of the
//     action's types, op, value} with op eq (a string, number or boolean), in (a non-empty list of
//     one kind), starts_with or string_contains (a string), gt, gte, lt or lte (a number or a
//     string), any ([]); no other key. A time window, as the web UI writes a daily one, is leaves
//     on the environment: "_bk_iam_env_.tz" eq one time zone and "_bk_iam_env_.hms" (10000×hour +
//     100×minute + second there) compared with numbers; no other environment attribute (the
//     backend builds tz and hms only), one zone a row. The checks evaluate it by the sandbox's clock
//     (allowed within the window only), the queries answer a row within its window without the
//     window and leave one outside it out, the list and GET policies/{id} keep it as written
//     (environment.go). expired_at 0 = permanent. 400 with {"error":…} naming the
//     bad field ("expression.content[1].field: …").
//   - POST /_sandbox/groups/{id}/rename with {"name":"…"} stands in for renaming a management
//     group in IAM's web UI (Server.RenameGroup): the name is trimmed, 2 to 128 characters, and
//     taken by no other group (compared case-insensitively); a read-only group is refused. The
//     group keeps its members, policies and attributes: a renamed sync group is still its grade
//     manager's (sync in the inspection, source_from_role in the v1 group list), and the grade
//     manager's next update renames it again only when it names the sync group (group_name).
//     400 with {"error":…} when refused.
//   - User ids compare without regard to case, as IAM's subject table (utf8_general_ci) does: a
//     grant, check or query naming "Alice" reaches the model's alice, and what is written and
//     answered is alice's (Model.userID).
//   - POST /_sandbox/frozen_subjects with {"type":"user","id":"alice","frozen":true} freezes a
//     subject (false thaws it; a reset thaws all), as the SaaS admin API's freeze fills IAM's
//     subject blacklist: every access check and policy query about it then answers 403, code 1901403
//     "no permission:subject(type=user,id=alice) has been frozen" (HTTP 200 on v1's
//     auth_by_resources), after the system and client checks, before the managers' pass, with
//     ?debug as without; its policies stay, and the list, the reads by id and the grants go on
//     (Server.Freeze), as the real IAM run here answered. The real backend takes the freeze
//     from a cache a while later; the sandbox at once.
//   - POST /_sandbox/faults with {"latency_ms":20,"fail":{"after":2,"count":1,"status":500,"code":1902500},
//     "rate_limit":{"after":0,"count":1,"retry_after_s":1}} (Faults): from then on every
//     authorization request waits latency_ms; after "after" further requests have succeeded, the next
//     "count" fail with that HTTP status and body code; a rate_limit fault answers 429 with
//     Retry-After and code 1642902 on the gateway, HTTP 200 and code 1306429 on ESB. {} clears every
//     fault. A failed request changes nothing in the store. With "spare_reads":true the faults
//     leave the policy reads (list, get and the access checks) alone, which then count for
//     nothing, so that a test of the writes is unmoved by what a plan reads first. More faults are
//     described under "Not emulated, and why".
//
// The embedded default model (default_model.json):
//   - Apps: "bkiam-sandbox" with secret "sandbox-secret", a client of every system below,
//     allow-listed for every action and creator type, on ESB's skip-login whitelist; "outsider" with
//     secret "outsider-secret", a client of no system.
//   - Users admin, alice, bob, carol, dave; groups 1, 2, 3; departments 1, 2, 3; the ESB token
//     "token-alice" stands for alice. The management API allow-list lets "bkiam-sandbox" call every
//     management API of every system, "outsider" none.
//   - bk_cmdb: resource types biz and host. view_host, edit_host, delete_host relate to [host];
//     view_biz, edit_biz to [biz]; edit_biz_host to [biz, host]; create_biz to nothing;
//     manage_host to [host] with auth_type rbac (a group's grant of it is stored as RBAC). Creator
//     config: biz → view_biz, edit_biz.
//   - bk_job: resource type job. view, edit, delete, list relate to [job]. Creator config: job →
//     edit, list, delete, view.
//   - bk_sops: resource types project and mini_app (a mini app lives under a project).
//     project_view, project_edit relate to [project]; mini_app_view, mini_app_edit to [mini_app];
//     mini_app_view sets ignore_iam_path (a user's project/mini_app path grant collapses to the id). Creator config:
//     project → project_view, project_edit, with the sub resource type mini_app → mini_app_view,
//     mini_app_edit. The callback knows the projects project1 ("Project One") and project2
//     ("Project Two"); any other project id is unknown (1902416).
//   - Limits: the real server's defaults — 200 per grant entry and per creator call, 1000 per
//     revoke entry, instance ids of at most 36 characters, 10000 instances per policy — each
//     settable in a model.
//
// The embedded BlueKing model (blueking_model.json, BlueKingModel; from Go, or as a --model file):
// subsets of the models bk_cmdb, bk_job and bk_sops really register, with real ids and names, the
// real order of related types and the real creator config of each kept type, so that a test can
// run on systems shaped like the real ones: most of bk_job's actions relate to bk_cmdb's biz or
// host ("bk_cmdb:biz"), and its script and job_template have bk_cmdb's biz and business_set as
// parents. Users, groups, departments, apps and limits are the default model's. Where each part
// comes from, how instance selections were mapped and what the format cannot say are in
// blueking_model.md.
//
// # Emulated behaviour
//
// Transports and layers:
//   - ESB routes POST /api/c/compapi/v2/iam/authorization/{batch_instance,batch_resource_creator_action,batch_path}/
//     and gateway routes POST /api/v1/open/authorization/{…}/ serve one store.
//   - Check order: injected faults; credentials (gateway: X-Bkapi-Authorization only; ESB: body,
//     else the header); ESB's user check; then the SaaS: body JSON (1902414), system client (1902403
//     "app_code X can not access system Y"), allow-list (batch_instance only; 1902403
//     "authorization_instance api don't support the [A] of system[S]"), field validation (1902412),
//     model checks (unknown system 1902416; unknown action 1902412 "x action not exists"; resources
//     not matching the action 1902417 ACTION_VALIDATE_ERROR), admin no-op, subject lookup (1902412
//     "user[x] not exists"; an unknown group: 1902500 on grant, OK with data [] on revoke), a
//     user's grant holding a path of the lone id "*" (1902500, nothing written: the SaaS asserts
//     that such a path has a node left once its last "*" is stripped; a group's is granted), apply.
//   - Gateway-layer failures use the gateway envelope {result,code,code_name,message,data:null} with
//     X-Bkapi-Error-Code and X-Bkapi-Error-Message headers and real statuses: bad credentials 1640001
//     (400), unknown route 1640401 (404), rate limit 1642902 (429 + Retry-After).
//   - SaaS answers keep the SaaS statuses on the gateway: 200, except 401/403/404/500 for
//     1902401/1902403/1902404/1902500. Every gateway answer has X-Bkapi-Request-Id.
//   - ESB answers HTTP 200 always, with "request_id" (32 hex) in every body; its own failures are
//     1306000 (app secret, missing user, bad bk_token, bk_username from an app not on the skip-login
//     whitelist) and 1306429 (rate limit). SaaS bodies pass through inside the 200.
//   - Every answer echoes the client's X-Request-Id (a 32-hex id is generated when absent).
//   - SaaS error messages are "<text> (<NAME>)", NAME being the server's ErrorCode name
//     (VALIDATE_ERROR, NOT_FOUND_ERROR, INVALID_ARGS, ACTION_VALIDATE_ERROR, …); a field-validation message is exactly the JSON of the
//     field errors, rendered like Python's json.dumps (", " ": " separators, \uXXXX escapes), e.g.
//     {"non_field_errors": ["maximum number of instance grant 200"]}. Success is
//     {"result":true,"code":0,"message":"OK","data":[…]}.
//   - Field validation follows the DRF serializers: all field errors at once, nested per-item error
//     lists with {} for valid items, DRF's messages ("This field is required.", "This list may not be
//     empty.", "Ensure this field has no more than 36 characters.", …), numbers accepted where strings
//     are expected; object-level checks (the per-call limits) only after all fields pass. Unknown keys
//     are ignored; "asynchronous" is accepted and ignored.
//   - batch_path path nodes: system is optional; name must be present and may be "" only when the
//     id is "*" (otherwise the node's non_field_errors say "name is required when id(x) is not
//     `*`"). A node without a system (absent or "") gets one as the SaaS fills it from the instance
//     selection the path matches: the system of the node of its type in the chain of the
//     resource's type (its first parents, each of its own system: bk_cmdb for a biz above a bk_job
//     script), by position first; a node the chain does not place takes the request's system.
//   - batch_path then checks, action by action in the request's order and before the model check
//     below, that every resource type given paths is one the action relates to (the SaaS fills each
//     path's systems from the action's instance selections): otherwise 1902412 "Parameter
//     verification failed: action(x) not support to grant instance", also for an action related to
//     no type. An unknown action fails there in the SaaS's call to the backend, 1902000 (a
//     "request iam error! … sql: no rows in result set" text), where batch_instance answers
//     "x action not exists".
//   - Texts as the real SaaS writes them through the gateway (English): a VALIDATE_ERROR raised by
//     code reads "Parameter verification failed: <text> (VALIDATE_ERROR)" (unknown user, unknown
//     action, creator configuration errors); a serializer's field errors come without the prefix;
//     the action check reads "Action check error: action `x` related resource types wrong" for a
//     count that differs and "… related resource types `t` wrong" for the first type out of place
//     (ACTION_VALIDATE_ERROR).
//   - Ids are trimmed (DRF CharField's default): system, type, instance, path node, subject, creator,
//     ancestor and action ids lose surrounding white space before use, so an id sent as " 1" is stored
//     as "1". Names are not trimmed (a name of spaces is not blank); choices (operate, subject.type)
//     are compared as sent.
//
// Semantics:
//   - batch_instance and batch_path write one custom policy per (subject, system, action). A grant
//     merges into it and keeps its policy_id; a grant of what is covered changes nothing
//     (idempotent). A group can also hold rows through permission templates (the model's
//     template_policies, POST /_sandbox/template_policies): separate rows for the same action,
//     listed by the read routes beside the custom one, never touched by a grant or revoke and
//     never in a grant's answer. So is a row with an attribute condition (POST
//     /_sandbox/expression_policies), which any user or group can hold, several per action: the
//     read routes list it and GET policies/{id} reads it with its expression as given, the access
//     checks count it, a group's delete takes it away, and the housekeeping purges a user's as it
//     purges the user's custom policies (the web UI writes it as one); a grant of the action to the
//     user raises its expiry as it raises the custom policy's, reviving an expired one (in IAM the
//     two are one policy, whose one expiry every grant raises); the management API's group
//     permission routes neither list nor delete it (their custom policies are paths). The subject
//     holds the union of its rows.
//   - A group's instance policy of one type, for an action whose auth_type is rbac or all, is
//     stored as RBAC relations: the read list shows it only with type=rbac, under its backend id
//     plus 500000000, and GET by id does not find it. A user's policy, an any-policy and a
//     combined-resource policy stay ABAC.
//   - A revoke skips actions without a policy and paths not in the policy silently (the policy is
//     still listed); a revoke that empties a policy deletes it and answers its old id; the next grant
//     creates a new id. Paths are removed by string equality, so a path granted with ancestors is not
//     removed by a batch_instance revoke of the leaf id.
//   - Empty instances mean any instance (policy "any") on a grant; an action with no related type
//     takes resources [] and is always "any"; such actions cannot be mixed with related ones (1902417).
//     On a revoke, empty instances remove nothing from the policy of an action with related types
//     (instance, any or combined policy; it is still listed with its statistics); only the policy of
//     an action without a resource type is deleted whole. A combined revoke with one type empty
//     removes no group either.
//     Resources must match each action's related types in count, order, system and type (1902417);
//     a related type of another system is named with that system (see "Other systems' resource
//     types").
//   - Combined resources (actions related to several types): a grant appends its resource group
//     unless an existing group already contains it (each type's paths of the new group are among the
//     existing group's; contained or equal adds nothing), and drops the existing groups the new one
//     contains. A revoke removes only the groups fully contained in the revoked one (every type's
//     paths within the request), and the policy with its last group; a partial overlap is a silent
//     no-op that still answers OK.
//   - A grant to a group of a grade manager through the authorization routes (batch_instance,
//     batch_path) widens the grade manager's authorization scope to cover it, as the SaaS does
//     before every such grant (incr_update_auth_scope): an action no scope names gets a scope of
//     its own with the grant's paths, a path no scope of the action covers joins the first scope
//     naming it. A revoke narrows nothing; the management API's grants check the scope instead.
//   - Subjects: an unknown user is 1902412 "user[x] not exists" (grant and revoke). Group ids are not
//     checked by the field validation (a non-numeric id is just an unknown group); a grant to an
//     unknown group fails with 1902500 and HTTP 500 (HTTP 200 with the code on ESB), a revoke for one
//     answers OK with data [].
//   - User "admin" (any case) as subject or creator: nothing is stored, the actions are echoed with
//     policy_id 0, for grant and revoke alike, each with statistics counting the instances (paths)
//     requested for it.
//   - Expiry: one expired_at per policy, that is per (subject, system, action), for everything it
//     holds. A new user policy without expired_at (or with 0) expires now+365 days; an existing
//     policy's expiry changes only when the request's expired_at is greater — raised, never lowered;
//     0 or none changes nothing (the default is for new policies only) — by any grant into it, of
//     instances (or a combination) it holds already too, and it keeps its policy_id. Group policies never
//     expire (4102444800, whatever expired_at says); creator grants are permanent and upgrade an
//     existing policy. A partial revoke keeps the expiry; a revoke that empties the policy deletes
//     it. expired_at must be after now ("greater than now timestamp") and at most 4102444800.
//   - Expired user policies stay rows: inspection lists them with their past expired_at (the read
//     list, by its timestamp, drops them). A grant without expired_at merges into one and leaves it
//     expired (same id); a grant with expired_at, or a creator grant, revives it (same id). The
//     real IAM's daily housekeeping deletes a user's custom policies expired for more than 365 days
//     (expired_at < now - 365 days); the sandbox does it lazily, on the WithNow clock, whenever an
//     authorization call, a read route or the inspection touches the policies (group policies and
//     template rows are never purged). After that a grant creates a new policy: a new id and the
//     365-day default.
//   - Creator grants take every action of the type's node in the system's creator config, at any
//     depth of the tree (sub resource types); no config or no node answers the server's 1902412 texts.
//     An action related to no resource type becomes an unlimited (any) policy, which no batch_path
//     revoke of the created paths can undo; a node action related to another type (or several) fails
//     the whole grant with 1902417.
//     Each instance becomes the path ancestors + instance; ancestors are resolved through the "callback"
//     (the model's instance names) and an unknown one fails with 1902416.
//   - A grant's data lists every custom policy the subject holds in the system (the known server bug),
//     ordered by policy_id; a revoke's data lists the requested actions that had a policy. Every entry
//     has statistics.instance_count (all paths of all types; 0 for any); a revoke that empties a
//     policy reports the count it held before.
//   - Limits from the model (defaults: the real server's): per grant resource entry and per creator
//     call 200, per revoke entry 1000, instance/node id 36 characters, 10000 paths per type in one
//     policy after the merge. A call over a limit fails as a whole and stores nothing.
//   - The calls of one subject are served one at a time, as the real server locks per subject, and
//     the injected latency is spent in that turn: parallel calls for one subject gain nothing, calls
//     for different subjects overlap. Changes to the store are serialised by one store lock (a
//     superset of the real per-subject lock that keeps every answer consistent). A call that fails —
//     by validation, limit, fault or a failed state save — changes nothing.
//   - Management (see the package doc of internal/bkiam, "The management API"): the SaaS envelope,
//     success {"data":…,"result":true,"code":0,"message":"OK"}, an error {…,"data":null} with its own HTTP status
//     (401, 403, 404, 409, 400), except IAM backend errors, 1902000 REMOTE_REQUEST_ERROR in HTTP
//     200, whose message quotes the backend's answer as the SaaS does ("request iam error!
//     Request=[http_post /api/v1/web/groups/members request_id=…] Response[code=N, message=…]":
//     1901400 "bad request:…" for more than 1000 members, 1901409 "conflict:…" for the group quota,
//     1901500 "system error[…]: … sql: no rows in result set" for an unknown member). Checks in the
//     SaaS's order: gateway credentials; the app is a client of the path's
//     system ("app_code X can not access system Y"); the model's management allow-list
//     (apps[].management; "system[S] is not allowed to call management api[A], please contact the
//     developer to add a whitelist"), by the real names v2_grade_manager_{create,update,detail,delete},
//     v2_group_{batch_create,list,update,delete}, v2_group_member_{list,add,delete,expired_at_update},
//     v2_subject_template_list and v2_group_subject_template_list;
//     then ownership, by the creator and not by the path: a grade manager's creator is the system
//     in whose path it was created, a group's is its grade manager's (a group created under "-" is
//     the path system's manager's, and only that system's). The same two checks are repeated for
//     the creator (client: "app_code X can not access system C"; allow-list), so an app that is a
//     client of both manages a grade manager and its groups through either system's path. A grade
//     manager without a creator record (ForgetCreator, POST /_sandbox/grade_managers/{id}/
//     forget_creator: as made in the web UI), an unknown or a gone id is 403 "role[N] can not be
//     operated by app_code[A], since role is not created by system[S])" (grade managers, and groups
//     of a creator-less grade manager) or "group[N] can not operated by app_code[A], since related
//     role of group is not created by system[S])" (groups); GET grade_managers/-/groups/ is 403 (no
//     view serves it). A create past limits.grade_managers_per_system (500 by default) grade
//     managers of the path's system is 400 1902412 '["系统 (S): 可创建的分级管理员数量已超过最大值 N"]
//     (VALIDATE_ERROR)' (escaped as json.dumps does). Then the body (bad JSON
//     1902414) and the serializers' field checks (1902412, the JSON of the field errors followed by
//     " (VALIDATE_ERROR)"). Ids in paths are digits only; another path is the gateway's 404.
//   - Grade managers: create and update take the same body (name 1..512, description, members of
//     any strings ≤ 64, non-empty authorization_scopes, each checked against the model as a
//     group-permission grant is ("x action not exists", 1902417 for resources that do not match an
//     action's types), non-empty subject_scopes of type user, department or *, sync_perm,
//     group_name); an update is a full replace. Names are unique across every grade manager,
//     compared case-insensitively (409 "名称 [X] 已存在，…"). sync_perm creates the sync group
//     (group_name or "<name> administrator group": the SaaS's "-管理员组" in English, the language
//     it answers the management API in — with the grade manager's
//     description, not read-only) holding the grade manager's members that are users of the
//     model, and grants it the scope (permanent policies, merged as a grant; synchronously,
//     where the SaaS runs a scope of several systems as a background task); an update without
//     sync_perm deletes it with its policies, one with it renames it (when group_name is given),
//     makes its members exactly the grade manager's users (departments removed, present users'
//     expiries kept), deletes its policies of actions that the scope's systems no longer list
//     (other systems' stay) and merges the scope in again. GET answers {id, name,
//     description, creator, created_time, updated_time, updater, members, sync_perm}
//     (creator/updater "bk__anonymous_user"), never the scopes. DELETE answers {} at once; the grade
//     manager, its groups and their members go after limits.grade_manager_delete_delay_ms (2000 by
//     default; WithGradeManagerDeleteDelay overrides it, 0 = at once; the delay runs on the WithNow
//     clock), and until then it still reads and a repeat DELETE answers {} again; its subject
//     templates go with it. A create with sync_perm and sync_subject_template also gives the sync
//     group a subject template mirroring it (see Subject templates); an update reads no
//     sync_subject_template, and its resync of the sync group's members (a grade manager's member
//     change) is not mirrored on the template, as the SaaS changes them below its mirroring.
//   - Group permissions (allow-list names group_policy_grant, group_policy_revoke and
//     group_policy_list, the v1 names the v2 routes check; v2_group_policy_delete and
//     v2_group_policy_action_list): a grant or revoke takes {system (absent or blank: the path's),
//     actions [{id}] (non-empty, no repeats), resources [{system, type, paths [[{system, type, id ≤
//     36, name}]]}]}, checked against the model as batch_path is (x action not exists, 1902417 for
//     resources that do not match the action's types), and the grant against the owning grade
//     manager's authorization scope: each action named by a scope of the system, each path under one
//     of the scope's paths of its type (a prefix of it, ids equal or "*", or a lone "*" node of the
//     path's own type), else 400 1902412 "系统：S 模板：0 校验错误：…". A system manager's group may be
//     granted anything of its system. The policies are the authorization API's (one per system, group
//     and action, permanent; a grant merges, a revoke subtracts and deletes an emptied policy), so a
//     grant through either API shows in both, and the per-policy limit applies. An action related
//     to no type takes "resources": []; null is 400 1902412 "This field may not be null." (a missing
//     field "This field is required."). The list answers the
//     group's custom policies of the path system as rows {id (the action), policy_id,
//     backend_policy_id 0, expired_at, expired_display, auth_type, type, name, description,
//     sensitivity_level ("L1", the default), resource_groups [{id (a fresh UUID on every read), environments [],
//     related_resource_types [{system_id, type, condition [{id, attributes [], instances [{type, name,
//     path [[{system_id, type, type_name, id, name ""}]]}]}]}]}]}, paths grouped into instances by the
//     type of their last node whose id is not "*", condition [] for any instance; the actions route
//     answers [{id}]. DELETE …/actions/-/policies/ deletes every custom policy of the group in the
//     system whatever actions it names, as the SaaS does (quirks.group_policy_delete_ignores_actions
//     false deletes only those). Groups created through the management API are subjects of the
//     authorization routes as the model's are; deleting one (or its grade manager) deletes its
//     policies.
//   - The v1 grade-manager list (allow-list name grade_manager_list; the client and allow-list
//     checks on the query's system) answers the grade managers that system created, most recently
//     updated first, rows {id, name, description}, name a case-insensitive substring, paged as the
//     v2 lists; its errors other than 401, 403, 404 and 500 answer HTTP 200, as v1 routes do.
//   - The v1 group list, GET /api/v1/open/management/grade_managers/{id}/groups/ (allow-list name
//     group_list), has no system in its path: its checks go by the grade manager's creator alone
//     (client, then allow-list), and a grade manager without a creator record, unknown or gone is
//     403 "role[N] can not be operated by app_code[A], since role is not created by app_code[A]."
//     (v1's own text). It answers the grade manager's groups, newest first, rows {id, name,
//     description, attributes: {source_type, source_from_role}}: the SaaS's group attributes, each
//     with its default when unset. source_from_role is true for the grade manager's sync group
//     only, and stays through a rename; source_type is "openapi" for a group made by the batch
//     create (unless its create_attributes is false) and for the sync group of a grade-manager
//     create, "" for one an update builds. No filters; paged by page/page_size or limit/offset
//     (default 10, no maximum); a page past the end is an empty page, not 404 (the view slices the
//     list itself).
//   - Groups: a batch create takes 1..10 groups {name 2..512, description, readonly} (a name twice
//     in the batch: 400 "用户组名称X不能重复") and sync_subject_template (a key of the body, for every
//     group of the batch: each gets a subject template mirroring it) and answers their ids in order;
//     group ids follow the model's highest group id. Names are unique per owner, compared case-insensitively (409
//     "存在同名用户组"); at most 10000 groups per grade manager. The list (page/page_size, or
//     limit/offset; default 10, no maximum; inherit accepted; id exact; name and description
//     case-insensitive substrings; action_id keeps the groups holding a policy of that action in
//     the path's system, custom or template; the resource filters are not served) is newest first, rows {id, name, user_count, department_count,
//     subject_template_count (the subject templates bound to the group, expired bindings included),
//     description, creator, created_time, readonly}; a page number past the
//     end (of this list and the v1 grade-manager list) is 404 1902404 "数据不存在 (NOT_FOUND_ERROR)", DRF's paginator's
//     NotFound, where the first page of an empty list is not. PUT takes {name 2..128,
//     description}, an empty or absent field keeping the old value (a template mirroring the group
//     keeps the name it was given). DELETE is at once, members and template bindings included,
//     and deletes the subject template mirroring the group (with its bindings to other groups);
//     afterwards the group is a 403.
//   - Members: add {members [{type user|department|template, id}], expired_at} with now < expired_at
//     ≤ 4102444800 (else 400 "expired_at must more then now" or DRF's bound; the 2026 SaaS also
//     caps it at two years from now, permanent aside: "SaaS releases" above): a template id that
//     does not read as an integer is 400 1902412 "人员模板 ID 非法" (before any other check);
//     "admin" and users or departments the model does not know are dropped silently; a member
//     outside the grade manager's subject_scopes (not everyone,
//     not named, in no named department or one under it) is 403 1902403 "用户 (x) 在分级管理员的授权
//     范围内，请编辑分级管理员授权范围" (部门 for a department: the SaaS's words, which lack a 不);
//     the group's users + departments + the members added (present ones
//     counted again) must stay ≤ limits.group_member_limit (1000 by default; 400
//     "超过用户组最大可添加成员数1000"; templates are not counted), then a template not related to the
//     group's owner (the group's grade manager, or the system manager of the group's system) is 400
//     1902412 "人员模板不存在：N", then more than 1000 in one call is 1902000, and so is a
//     member joining a group that holds permissions in a system where the member is already in
//     limits.subject_max_groups (100 by default) groups holding permissions ("[Handler:
//     checkSubjectGroupsQuota] subject {user x} can only have 100 groups in system S.[current 100]
//     => quota error", the backend's 409 passed on; a member already in the group is not counted); an upsert that only ever raises a member's expiry.
//     A template is bound until expired_at; one bound already is skipped, its expiry unchanged
//     (the new expired_at is ignored). DELETE takes
//     ?type=&ids=a,b,c (empty entries dropped): more than 1000, or a subject the model does not know,
//     is 1902000 in HTTP 200; non-members are ignored. With type=template the ids must read as
//     integers (else 400 "人员模板 ID 非法") and unbind those templates, ignoring the others, with
//     none of the backend's checks. PUT …/members/-/expired_at/ (user and
//     department only: a template is 400 "is not a valid choice", so a binding is never renewed;
//     its expired_at checked as the add's, the 2026 cap included)
//     raises the expiry of members, ignores the rest; more than 1000 members is
//     the backend's refusal in 1902000 (quoting /api/v1/web/group-members/expired_at). The list includes expired
//     members, newest relation first, rows {type, id, name (the id), expired_at, created_at}, and
//     never a template. A sync group's user changes are mirrored on its grade manager's members,
//     and a group's user and department changes (adds, and removes of every id named) on the
//     subject template mirroring it.
//   - Subject templates (人员模板), as far as an app can see and use them: no open route creates
//     one; a group created with sync_subject_template (above) gets a read-only template mirroring
//     it (readonly true, source_group_id the group, the group's name and description at the
//     time, its members, the group's owner as owner, creator "bk__anonymous_user"; ids from their
//     own sequence, from 1). It follows the group's member adds and removes through the member
//     routes — not the expiry of a membership: an expired member stays in the template until
//     removed — and is deleted with the group. GET grade_managers/{id}/subject_templates/
//     (allow-list name v2_subject_template_list; ownership as for the grade manager) answers the
//     grade manager's templates, newest first, paged as the group list (a page past the end is
//     404), ?name= and ?description= case-insensitive substrings, ?creator= exact, rows {id, name,
//     description, readonly, source_group_id, creator, created_time}. GET
//     groups/{id}/subject_templates/ (v2_group_subject_template_list; ownership as for the group)
//     answers the templates bound to the group, newest binding first, expired bindings included,
//     paged the same way, {count, results [{id (a string), name, expired_at}]}. The SaaS's limit
//     of 1000 members per template is checked by none of these routes, as by the SaaS's mirroring.
//   - Management calls count in the stats under grade_manager:*, group:*, member:*,
//     subject_template:list and group_subject_template:list, and the
//     injected faults (latency, fail, rate_limit, drop, slow) apply to them as to the authorization
//     calls. A failed call, or a failed state save, changes nothing.
//   - Read routes (gateway only, backend envelope {code,message,data}, errors with HTTP 200):
//     GET /api/v1/systems/{s}/policies?action_id=&page=&page_size=&timestamp=&type= and
//     GET /api/v1/systems/{s}/policies/{backend_id}. Backend ids come from their own sequence and
//     never equal the SaaS policy_id of the same policy; an emptied-and-regranted policy gets a new one.
//     Paging (page ≥ 1, page_size 10–500, default 100); type abac (default) or rbac; the list keeps
//     rows with expired_at > timestamp (absent or 0: today 00:00 of the clock's zone; more than one
//     day before that: 1901400); "results" is null when empty. Expressions are built from the stored
//     paths as the package doc of internal/bkiam describes them ("Policy expressions"), including
//     the ignore_iam_path collapse (for a user, never a group, and an action whose model sets
//     ignore_iam_path, a grant that writes the policy stores each path whose length equals the
//     chain length and whose leaf is not "*" as the bare id; a revoke that changes the policy
//     writes full paths again), the ",*/" prefix of a path that
//     ends at an ancestor "*" (only a "*" of the action's own type after ancestors is dropped),
//     and the one-node path of the type, "*" included, as an id comparison (a lone "*" is the
//     literal id). Errors, in the
//     backend's order: 1901404 unknown system, 1901401 not a client, 1901400 bad parameters,
//     1901404 unknown action or policy (a policy: "not found:policy not found", whatever the id),
//     1901403 a policy of another system asked for by id. GET by id answers a row expired or
//     not, as the real backend does (only the housekeeping takes it away).
//   - GET /api/v1/open/systems/{s}/policies[/] answers 301 to the slashed backend path, with or
//     without the client's slash: the gateway forwards the route without it and the backend
//     serves only the slashed form, so through a gateway the route never lists.
//
// Access checks (the backend's policy auth and query routes; gateway only, backend envelope, the
// app's credentials alone):
//   - POST /api/v2/policy/systems/{s}/auth/ takes {subject:{type,id}, action:{id},
//     resources:[{system,type,id,attribute}]} and answers {"allowed":bool};
//     …/auth_by_actions/ takes actions [{id}] (at most 10) instead of action and answers
//     {"<action>":bool}; …/query/ takes {subject, action, resources (optional)} and answers the
//     action's condition itself; …/query_by_actions/ takes {subject, actions, resources
//     (optional)} and answers [{action:{id}, condition}]; POST /api/v1/policy/auth_by_resources
//     takes {system, subject, action, resources_list (at most 100 sets)} and answers {"<key>":bool}, a set's key
//     being its resources' "system,type,id" joined by "/" ("" for an empty set). Success is code 0
//     with message "ok".
//   - Checks in the backend's order. On v2, the system and the client, as the read routes answer
//     them (1901404, 1901401). The body: the first rule broken, in the backend's words after
//     "bad request:" (1901400): "EOF, json decode fail", "json decode or validate fail, err=…",
//     "Type is required", "Attribute is required" for a resource without the key ({} passes;
//     "resources": [] passes where resources are required), "Actions cannot be longer than 10",
//     "ResourcesList cannot be longer than 100". On v1, then, the client: "client(X) can not
//     request system(Y)" (1901400; an unknown system is a 1901400 too). Then the managers (below),
//     then each action in order: an unknown action is 1901400 "bad request:action.id invalid"
//     (on query/ "bad request:[PDP:Query] queryAndPartialEvalConditions fail => action.id
//     invalid", the error as the query wraps it, with no debug tree) — on query_by_actions a
//     system error, which that handler does not tell apart; resources that do not match the action
//     are a system error, 1901500 "system error[request_id=…]: … request resources not match
//     action …", not a 400. For auth and auth_by_actions a match is as many resources as the
//     action has related types, each one of them, system and type, in any order (the backend
//     compares with the set of them: ValidateActionResource). The queries check only the action's
//     related types of other systems (ValidateActionRemoteResource): a resource of the action's
//     system must be one of its types and may be left out; those of other systems must be as many
//     as its types of other systems, each of one of their ids (the backend compares their type
//     alone: a resource of a third system with such a type id passes, and is then evaluated as no
//     resource). query_by_actions checks them always, so an action related to another system's
//     type fails the whole call (no answer for the actions beside it) unless the resources give
//     that type; query/ checks them only when resources are given (QueryV2), and without
//     resources answers the action's whole condition. auth_by_resources checks no set: one that
//     does not match simply evaluates false.
//     Errors carry data {} and, on v2, their code's HTTP status (400, 401, 404, 500); v1 answers
//     HTTP 200 always.
//   - Managers: user admin (any case), the model's super_managers and the system's
//     system_managers are allowed everything — true, all true, {"op":"any","field":"","value":[]}
//     for each action — with message "ok, as super_manager or system_manager", before the action
//     or the resources are looked at and without reading a policy.
//   - What counts: for a user, its own unexpired rows of the system and action (custom policies
//     and template rows), and those of every group it is an unexpired member of — directly, or
//     through a department it belongs to or any ancestor of one (department_parents), as IAM holds
//     a user's ancestor departments as well — or reaches through a subject template bound to the
//     group with an unexpired binding and holding the user, one of its departments or an ancestor
//     of one (the backend folds template bindings into subject_system_group, which auth reads).
//     Group members come from the management API (model groups have none). The backend's
//     user-groups route, GET /api/v1/open/users/{id}/groups[?inherit=true], reads the memberships
//     alone (subject_relation): a group reached only through a template is not in its answer. For a group, its own rows. Rows stored as RBAC count like any other;
//     expiry is strict (expired_at > now) for rows and memberships alike, except that ?force
//     (any value; the v2 routes), which bypasses the backend's caches, keeps the rows expiring
//     this very second (its database query reads expired_at >= now). A user IAM does not know
//     (not in users, nor a directory user synced), an unknown or deleted group, or a subject of
//     another type is answered as one without permissions (false, all false, {}), not an error.
//   - Evaluation: each row's expression, as the read routes render it, against the resources by
//     type, as the backend's conditions do (bk-iam pkg/abac/pdp/condition); a resource counts as
//     the action's related type of its system and type only (the backend keys its resources and
//     its stored fields by system and type), so {"system":"bk_job","type":"biz"} is no resource
//     for a bk_job action related to bk_cmdb's biz. A leaf reads the attribute its field names of the resource of its type from resources[].attribute, "id"
//     being the resource's id whatever the attribute says; a resource or an attribute not sent
//     makes it false, and an attribute sent as a list holds when one element does. eq and in are
//     the backend's StringEquals (or, for boolean and number values, Bool and NumericEquals):
//     equality of decoded JSON values, so the string "8" does not equal the number 8, and a
//     boolean never matches a list; starts_with (StringPrefix) compares strings, and on
//     _bk_iam_path_ (a path or a list of paths, "/type,id/…/" or "/system,type,id/…/") a policy
//     path ending ",*/" takes any instance under its parent; string_contains (StringContains);
//     gt, gte, lt and lte compare two numbers or two strings, with one value; any holds; AND and
//     OR. So a grant held as a path through ancestors
//     (/biz,1/host,7/) allows host 7 only when the caller sends its path, as on the real backend,
//     while a one-node grant (/host,7/) allows it whatever the path. The subject is allowed when
//     one row holds; an action related to no type is allowed by any row.
//   - The queries' condition: the rows that count, merged as the backend merges them — {}
//     when none counts (the backend's empty answer, which allows nothing; what the official SDK
//     reads as "no permission"); the first any whole when a row is an any; otherwise the eq and in
//     leaves of one field merged into one in (values concatenated, numbers kept numbers, a
//     repeated id repeated; fields
//     in name order after the other conditions, where the backend's order varies) and an OR of the
//     rest, a lone condition bare. With resources, each row is first partly evaluated as the
//     backend does: a row failing on a given type is dropped, the conditions on given types that
//     hold are removed, and a row left with nothing is {"op":"any","field":"","value":[]}.
//   - Debug output: ?debug (any value, even "0" or none) on the v2 routes adds "debug" beside
//     code, message and data: a tree of entries {time, context, steps [{index, name}], evals
//     {backend id: "pass"|"no pass"|"unknown"}, error, sub_debugs [entries]}. auth's and query's
//     tree is the action's entry; auth_by_actions' and query_by_actions' a root (empty context)
//     with one entry per action, in order. An action's entry has context.action {ID,
//     Attribute:{Attribute: {auth_type (1 abac, 2 rbac, 15 all), pk, resource_type [{System,
//     Type}] (each related type under its own system)}}}, a step "Validate action resource" (auth)
//     or "Validate action remote resource" (the queries, when they check: not on query/ without
//     resources), and context.subject {Type, ID, Attribute:{Attribute:{department [keys of its departments and
//     their ancestors], pk}}}; for a subject IAM does not know (a user never synced, a group that
//     does not exist or not a number, another type) Attribute.Attribute is {} and the steps stop
//     after "Fetch subject details", with no sub entries. Otherwise its one sub entry (the policy
//     query) holds the rows in the backend's internal form and, under it, the database's entry,
//     whose context.effectPolicies lists every row the backend read for the subject and action —
//     the subject's own (SubjectPK its key) and those of the groups it reaches (SubjectPK the
//     group's key), custom, template and attribute-condition rows — as {PK (the backend id the policy list
//     shows and GET policies/{id} takes), SubjectPK, ExpressionPK, ExpiredAt}, ordered by subject
//     key, expiry, id; unexpired by the test above (force or not); never the rows stored as RBAC
//     relations, which the backend reads apart (their groups' keys are in context.rbacGroupPks).
//     For an action related to no type that entry has "without_resource_types": true and
//     ExpressionPK -1; with no rows, "got_no_policies": true. Subject keys are derived from the
//     model: the users in order from 1, then the directory users, the departments, and the groups
//     at that offset plus their id; stable for the sandbox's lifetime and across its state file
//     (with the same model), distinct for every subject. A manager's answer has no "debug" key at
//     all. With a tree, a system error (1901500) answers HTTP 200, not 500, carrying for
//     query_by_actions the failing action's entry, for auth and query/ the action's entry, for
//     auth_by_actions the root with the entries of the actions before it; an error of the binding
//     (1901400), and query/'s unknown action, has none. The internal expressions name each field
//     with its type's system ("bk_cmdb.biz.id" in a bk_job action). The rest (times, step names,
//     the merged "expression", the internal expressions and their md5 signatures, expression keys,
//     evals) is kept plausible, as recorded from a real IAM, not exact.
//   - They count in the stats under policy_auth, policy_auth_by_actions, policy_auth_by_resources,
//     policy_query and policy_query_by_actions, and the faults treat them as the policy reads
//     (spare_reads spares them; a slow fault delays them, a drop resets the connection).
//
// Other systems' resource types (a model's "system:type"; real systems relate their actions to
// CMDB's business and host, and place their types under CMDB's business):
//   - The model route answers such a related type and parent under its own system_id, and a
//     related type with that system's instance selection (the sandbox derives one per type,
//     TYPE_list); a type's selection chain runs through its parents' systems (bk_job's script_list
//     is bk_cmdb's biz, then bk_job's script).
//   - The SaaS's writes (batch_instance, batch_path, their revokes, the management API's group
//     grants and revokes, a grade manager's authorization_scopes) name the type with its system
//     ({"system":"bk_cmdb","type":"biz"} in a bk_job call); the type under the action's own
//     system is 1902417. Paths hold nodes of any system; batch_path fills a node's missing system
//     from the selection chain (above). A creator grant of a type whose ancestor is of another
//     system resolves the ancestor through that system's callback (its instances). The widening of
//     a grade manager's scope by a grant names each type with its own system.
//   - Stored paths keep every node's system (inspection: "/bk_cmdb,biz,1/bk_job,script,s2/"); the
//     read routes' expressions drop the systems as the backend does ("biz.id",
//     "script._bk_iam_path_" starting with "/biz,1/"); the management API's group list names each
//     related type and node with its own system_id.
//   - The access checks (bk-iam pkg/abac/types/request Request.ValidateActionResource and
//     ValidateActionRemoteResource, pkg/abac/pdp/helper.go queryAndPartialEvalConditions,
//     pkg/api/policy/handler/query_v2.go QueryV2 and BatchQueryV2ByActions): see "Checks" and
//     "Evaluation" above. A resource of another system that
//     a query gives is evaluated by its id and the attributes the caller sent; the backend instead
//     replaces its attributes by what that system's provider answers for the attributes its rows
//     name (fillRemoteResourceAttrs; none is asked for when the rows name only the id), which the
//     sandbox cannot ask. auth and auth_by_actions use the caller's attributes, as the backend does.
//
// # Not emulated, and why
//   - asynchronous=true is treated as synchronous, like the real server.
//   - Resource names are never verified (the real server does not verify instance names either);
//     path node names are not stored.
//   - Path topology is not checked against the system's instance selections: any path whose nodes
//     name known resource types, and whose nodes above the instance do not repeat a type and id
//     (1902416 "path: /t,id/…/ nodes must not repeat", the SaaS's check when it translates a
//     policy), is accepted (the sandbox derives one instance selection per type, the chain of
//     its first parents, and checks no path against it). The ignore_iam_path collapse takes as
//     "the chain length of the first matching instance selection with ignore_iam_path" the length
//     of that derived chain (ancestor types + the type: 2 for bk_sops' mini_app under project).
//   - Multi-tenancy (X-Bk-Tenant-Id), gateway app-permission (1640301) and ESB component permission
//     (1306403), the management API's permission templates, subset managers and v1 routes other
//     than the grade-manager list are out of scope. The per-user quota of grade managers a user
//     may be a member of is not checked.
//   - Of subject templates, only what an app sees and uses (the mirrors of groups, their binding as
//     members, the two lists and their effect on the access checks) is served. Out of scope: a
//     free-standing template (no open route makes one; the web UI's are not emulated), a
//     template's own member routes and its 1000-member limit, the renewal of a binding (only the
//     web UI renews one), the admin API (whose member add drops templates), the groups/belong
//     routes (not served at all), and the backend's group quota (subject_max_groups) counting
//     the groups a member reaches through a template.
//   - Of the backend's access checks, the v1 auth, auth_by_actions, query, query_by_actions and
//     query_by_ext_resources are not served; neither are ?debug on
//     auth_by_resources, the "RBAC Eval" step of a debug tree, the
//     security-audit app's pass to every system on v1, temporary policies, department subjects,
//     nor the backend's rate limit.
//   - GET policies/{id}?type=rbac (the backend's read of an RBAC row by id) is not served: an
//     RBAC row's id is not found, as without the parameter.
//   - Subject names in read results are the subject ids (the model has no display names); rows are
//     never skipped for unresolvable subjects since every stored subject exists in the model.
//   - Replication lag of the backend (stale expressions for minutes) is not emulated: reads see
//     writes at once, as a single-replica backend does.
//   - An injected "fail" fault on an ESB route answers HTTP 200 with the code (ESB never passes a
//     non-200 status through); on the gateway it answers the given status (a 16xxxxx code uses the
//     gateway envelope, any other the SaaS envelope).
//   - Bodies over the size limit (10 MiB by default) answer 1902414.
//   - Faults beyond the contract's, for the provider's fault tests: "fail" with "body":"html"
//     answers the status with a reverse proxy's HTML page (no envelope, either transport); "fail"
//     with "message" answers that message instead of the sandbox's own (IAM's words for an answer
//     the store would not give then, such as the ownership 403 for a group that is there); "drop"
//     {after,count,served} resets the connection (TCP RST) instead of answering, after carrying the
//     call out when served is true (the answer is lost, the change is not); "slow"
//     {after,count,delay_ms} delays the call, then carries it out even if the client has given up.
//
// # Known differences from the real server
//
// Found by comparing this package with the package doc of internal/bkiam ("Where the real server
// differs from a first reading", "What a real IAM answered"): none is left unfollowed. The SaaS's
// error table declares HTTP 400 for 1902412 and 1902417, but the real open API answered both with
// HTTP 200, as the sandbox does.
//
// # Model format
//
// A model is one JSON object (unknown fields are an error; every error names the bad field, e.g.
// `systems[1].actions[2].related_types[0]: unknown resource type "hots"`):
//
//		{
//		  "systems": [{
//		    "id": "bk_sops",
//		    "resource_types": [{"id": "project", "instances": {"project1": "Project One"}}, {"id": "mini_app"}],
//		    "actions": [{"id": "mini_app_view", "related_types": ["mini_app"], "ignore_iam_path": true, "auth_type": "abac"}],
//		    "creator_actions": [{"id": "project", "actions": [{"id": "project_view", "required": false}],
//		                         "sub_resource_types": [{"id": "mini_app", "actions": [{"id": "mini_app_view", "required": false}]}]}],
//		    "allow_list": {"instance_actions": ["*"], "creator_types": ["*"]},
//		    "allow_auth_systems": ["bk_cmdb"],
//		    "template_policies": [{"template_id": 7, "group": "1", "action": "project_view", "paths": ["/bk_sops,project,project1/"]}]
//		  }],
//		  "users": ["admin", "alice"],
//		  "directory_users": ["erin"],
//		  "groups": ["1", "2"],
//		  "departments": ["1", "2"],
//		  "super_managers": ["admin"],
//		  "system_managers": {"bk_sops": ["alice"]},
//		  "apps": [{"code": "bkiam-sandbox", "secret": "sandbox-secret", "client_of": ["bk_sops"], "esb_skip_login": true,
//		            "management": {"bk_sops": ["*"]}}],
//		  "tokens": {"token-alice": "alice"},
//		  "limits": {"grant_instances": 200, "revoke_instances": 1000, "instance_id_length": 36, "policy_instances": 10000}
//		}
//
//	  - systems[].resource_types[].instances: the instance names the system's callback knows; only
//	    ancestors of creator grants are looked up there (an id not listed is unknown: 1902416).
//	  - systems[].actions[].related_types: resource types, in order; [] for an action without
//	    instances, several for a combined resource. Each is "type", a type of the action's own
//	    system, or "system:type", a type of another system of the model (bk_job's access_business
//	    relates to "bk_cmdb:biz"); the other system must be in the model (anywhere in systems) and
//	    hold the type, and an action's related types need distinct ids, as the backend's
//	    expressions name a type by its id alone. See "Other systems' resource types".
//	  - systems[].resource_types[].parents: the types an instance lives under, the first one
//	    giving the chain of the type's instance selection; "type" or "system:type" as above
//	    (bk_job's script has the parent "bk_cmdb:biz"). A type id holds no colon. The load names
//	    a bad reference: `systems[1].actions[0].related_types[0]: "bk_cmbd:biz" names an unknown
//	    system "bk_cmbd"`, `…: "bk_cmdb:bizz": system "bk_cmdb" has no resource type "bizz"`.
//	  - systems[].creator_actions: the resource-creator-actions tree; each node's actions must exist
//	    and should relate to that node's type or to none (an action of another type loads, and a
//	    creator grant for the node fails with 1902417); "required" is read and ignored, like the server.
//	  - systems[].actions[].auth_type: "abac" (default), "rbac" or "all"; see "Semantics" for how
//	    rbac and all change what the read list shows.
//	  - systems[].template_policies: rows groups hold through permission templates, seeded on start
//	    and after a reset: a positive template_id, a model group, an action that is not a combined
//	    resource, paths as inspection strings (none = any), expired_at (0 = permanent).
//	  - systems[].allow_list: IAM's API allow-list for batch_instance/batch_path actions and creator
//	    types; "*" allows all.
//	  - systems[].allow_auth_systems: the other systems (or "*") whose actions the system may put in
//	    the authorization scopes of the grade managers it creates (IAM's SystemAllowAuthSystem; a
//	    system may always use its own, and any other is 403 "system[S] is not allow to operate
//	    system[T]'s permission data, …"). The default model lets bk_cmdb use bk_job.
//	  - apps[].management: the management API allow-list as it applies to the app: system id (or
//	    "*") → allow-list names (e.g. "v2_grade_manager_create") or "*". The default model allows
//	    "bkiam-sandbox" everything and "outsider" nothing. The client check applies as well.
//	  - apps[].admin: IAM's admin-API allow-list for the app (by app code, no system): admin API
//	    names such as "subject_permission_cleanup", or "*". apps[].gateway_grants: the gateway
//	    resources granted to the app ("open_user_groups", "admin_cleanup_users_permission", …, or
//	    "*"), read only when "gateway" is "2026".
//	  - gateway: "" / "2024" or "2026", the gateway generation (see above).
//	  - saas: "" / "2025" or "2026", the SaaS release (see above); apps[].management_objects, the
//	    app's rows of the 2026 object allow-list ({"object_type": "group", "object_id": 42, "api":
//	    "v2_group_member_add"}), and limits.member_expiry_max_days (0: 730), the 2026 cap on
//	    membership expiries, load only with "saas": "2026".
//	  - quirks: the real server's bugs, reproduced unless turned off:
//	    group_policy_delete_ignores_actions (default true).
//	  - departments: the organisation's department ids (numeric), which group members may name;
//	    users (above) are the users they may name. department_parents (department → parent) and
//	    user_departments (user → the departments it belongs to directly) say who a grade manager's
//	    subject scope admits. The default model: departments 2 and 3 under 1, alice and carol in 2,
//	    bob in 3, dave and admin in none.
//	  - directory_users: users the organisation's user directory knows and IAM has not synced yet
//	    (none by default). The authorization API syncs one on first use (a grant, revoke or creator
//	    grant naming them works, and IAM knows them from then on; the state file keeps the sync); the
//	    management API does not sync, and its member add drops such a user silently, as it drops an
//	    unknown one, until the authorization API has synced them.
//	  - super_managers: users holding IAM's super manager role; system_managers: system → users
//	    holding the system's manager role (users of the model; none by default). Only the access
//	    checks read them: such a user is allowed everything there, as admin is.
//	  - apps[].client_of: systems the app is a registered client of ("*" = all); esb_skip_login puts the
//	    app on ESB's skip-login whitelist (bk_username accepted).
//	  - tokens: ESB bk_token values and the user each stands for.
//	  - limits: zero or absent fields take the real server's defaults; grade_manager_delete_delay_ms
//	    is how long a grade-manager delete takes to be carried out, cleanup_delay_ms a leaver
//	    cleanup; group_member_limit is how many
//	    users and departments a group may hold (1000, the SaaS's BKAPP_GROUP_MEMBER_LIMIT default; a
//	    site may raise it, and the benchmarks do); subject_max_groups is the backend's
//	    subject_max_groups_limit, how many groups holding permissions in one system a member may be
//	    in (100; see Members).
//
// # State file
//
// With WithStateFile (--state), every change is written atomically (temp file in the same directory,
// fsync, rename, directory fsync), so a crash leaves the old or the new file, never a torn one. A state
// file that does not exist yet starts an empty store and is created at once (so an unwritable location
// fails at startup, not on the first grant); the management API's state (subject templates included) is kept in it too, under
// "management", which a file from an older sandbox lacks and still loads without, and so are the
// directory users the authorization API synced ("synced_users"), and the rows with attribute conditions (a policy
// with "expression", which older files lack); one that exists but cannot be read, parsed or checked is
// a startup error and is left untouched — never silently emptied. If a save fails, the change is rolled back and
// the call answers 1902500.
package sandbox
