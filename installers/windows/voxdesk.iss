; Inno Setup 6 script: the Windows installer of Voxdesk, from the PyInstaller bundle in
; build\pyinstaller\dist\voxdesk (installers/voxdesk.spec run on Windows). From the repository root:
;
;   iscc /DAppVersion=0.1.0 installers\windows\voxdesk.iss
;
; gives build\installers\voxdesk-0.1.0-windows-x64-setup.exe. Per-user install by default (no
; administrator needed; the setup offers all users too). Silent: /VERYSILENT /SUPPRESSMSGBOXES.
; Not built or run on the Linux development machine: .github/workflows/installers.yml builds and
; smoke-tests it on a GitHub-hosted Windows runner.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "Voxdesk"
#define SourceDir "..\..\build\pyinstaller\dist\voxdesk"
#define IconFile "..\..\build\icons\voxdesk.ico"

[Setup]
AppId={{6A4C8F0E-2B7D-4E51-9C3A-7D1E5B0F9A42}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=Voxdesk contributors
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=commandline dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir=..\..\build\installers
OutputBaseFilename=voxdesk-{#AppVersion}-windows-x64-setup
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
UninstallDisplayIcon={app}\voxdesk.exe
#if FileExists(AddBackslash(SourcePath) + IconFile)
SetupIconFile={#IconFile}
#endif

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
; The whole bundle: voxdesk.exe (window), voxdesk-cli.exe (terminal) and _internal\.
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\voxdesk.exe"; Comment: "Voice assistant with live transcription"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\voxdesk.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\voxdesk.exe"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Python byte-code caches written next to the bundle at run time, if any. Settings and history in
; %APPDATA%\voxdesk and %LOCALAPPDATA%\voxdesk are the user's and stay.
Type: filesandordirs; Name: "{app}\_internal\__pycache__"
